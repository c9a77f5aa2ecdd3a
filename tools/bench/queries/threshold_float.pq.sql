SELECT device, count(*), max(humidity) FROM 'bench-data/M.snappy.parquet' WHERE humidity > 78 GROUP BY device ORDER BY device;
