SELECT device, count(*), min(reading) FROM 'bench-data/M.snappy.parquet' WHERE reading < 3000 GROUP BY device ORDER BY device;
