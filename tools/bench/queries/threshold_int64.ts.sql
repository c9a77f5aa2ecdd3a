SELECT device, count(*), min(reading) FROM 'bench-data/M.tsfile' WHERE reading < 3000 GROUP BY device ORDER BY device;
