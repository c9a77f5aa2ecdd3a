SELECT device, date_bin(INTERVAL '1 day', time) AS bucket, count(*), avg(temperature), min(temperature), max(temperature) FROM 'bench-data/D.tsfile' GROUP BY device, bucket ORDER BY device, bucket;
