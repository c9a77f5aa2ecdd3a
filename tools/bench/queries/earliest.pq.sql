SELECT device, min(to_timestamp_millis(time)), first_value(temperature ORDER BY time) FROM 'bench-data/M.snappy.parquet' GROUP BY device ORDER BY device;
