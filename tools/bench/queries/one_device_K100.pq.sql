SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/K100.snappy.parquet' WHERE device = 'dev-054321';
