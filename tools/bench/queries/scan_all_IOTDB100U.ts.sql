CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION 'bench-data/IOTDB100U' OPTIONS ('tsfile.layout' 'iotdb');
SELECT count(*), sum(temperature + 0), sum(humidity + 0), sum(reading + 0), sum(CASE WHEN status THEN 1 ELSE 0 END), count(DISTINCT label), count(DISTINCT device), count(DISTINCT region) FROM t;
