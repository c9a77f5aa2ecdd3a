SELECT count(*), sum(v17 + 0), sum(v500 + 0), sum(v999 + 0) FROM 'bench-data/WIDE.tsfile';
