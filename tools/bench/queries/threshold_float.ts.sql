SELECT device, count(*), max(humidity) FROM 'bench-data/M.tsfile' WHERE humidity > 78 GROUP BY device ORDER BY device;
