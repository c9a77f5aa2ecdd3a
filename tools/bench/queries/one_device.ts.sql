SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/M.tsfile' WHERE device = 'dev-000420';
