SELECT device, avg(temperature) FROM 'bench-data/M.tsfile' GROUP BY device ORDER BY device;
