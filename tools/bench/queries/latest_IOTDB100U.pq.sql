SELECT device, max(time), last_value(temperature ORDER BY time) FROM 'bench-data/IOTDB100U.dedup.parquet' GROUP BY device ORDER BY device;
