SELECT device, avg(temperature) FROM 'bench-data/M.snappy.parquet' GROUP BY device ORDER BY device;
