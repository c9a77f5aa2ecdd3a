SELECT device, count(*), max(temperature) FROM 'bench-data/M.tsfile' WHERE temperature > 45 GROUP BY device ORDER BY device;
