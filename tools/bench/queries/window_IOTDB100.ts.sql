CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION 'bench-data/IOTDB100' OPTIONS ('tsfile.layout' 'iotdb');
SELECT count(*), avg(temperature), max(humidity) FROM t WHERE device = 'dev-000042' AND time BETWEEN to_timestamp_millis(1700050000000) AND to_timestamp_millis(1700050999999);
