SELECT device, count(*), avg(temperature), min(temperature), max(temperature) FROM 'bench-data/D.snappy.parquet' WHERE time BETWEEN 1700025000000 AND 1700074999999 GROUP BY device ORDER BY device;
