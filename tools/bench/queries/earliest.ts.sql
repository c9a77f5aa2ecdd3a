SELECT device, min(time), first_value(temperature ORDER BY time) FROM 'bench-data/M.tsfile' GROUP BY device ORDER BY device;
