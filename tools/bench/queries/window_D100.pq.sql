SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/D100/parquet-snappy/*.parquet' WHERE device = 'dev-000042' AND time BETWEEN 1700050000000 AND 1700050999999;
