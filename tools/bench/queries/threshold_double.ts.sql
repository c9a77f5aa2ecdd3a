SELECT device, count(*), max(temperature) FROM 'bench-data/M.tsfile' WHERE temperature > 32 GROUP BY device ORDER BY device;
