SELECT device, max(to_timestamp_millis(time)), last_value(temperature ORDER BY time) FROM 'bench-data/M.snappy.parquet' GROUP BY device ORDER BY device;
