SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/MEGA.snappy.parquet' WHERE region = 'region-05' AND device = 'dev-543210';
