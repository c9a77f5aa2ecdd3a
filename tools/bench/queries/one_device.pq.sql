SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/M.snappy.parquet' WHERE device = 'dev-000420';
