CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION 'bench-data/IOTDB100U' OPTIONS ('tsfile.layout' 'iotdb');
SELECT device, max(time), last_value(temperature ORDER BY time) FROM t GROUP BY device ORDER BY device;
