SELECT count(*), avg(temperature), max(humidity) FROM 'bench-data/MEGA.tsfile' WHERE region = 'region-05' AND device = 'dev-543210';
