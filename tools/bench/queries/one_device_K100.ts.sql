SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/K100.tsfile' WHERE device = 'dev-054321';
