//! The bundled sample (`data/sample.tsfile`) reads back with the facts its generator
//! recorded in `data/sample.expected.json`; the library API's filters agree with each other.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, TimestampMillisecondType};
use arrow_array::{Array, RecordBatch};
use bytes::Bytes;
use datafusion_tsfile::format::DeviceId;
use datafusion_tsfile::{TableRead, TsFile, TsFileOptions};
use object_store::ObjectStoreExt;
use serde_json::Value;

use crate::common::repo_path;

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo_path("data/sample.expected.json")).unwrap()).unwrap()
}

fn read_all(file: &TsFile, read: TableRead) -> Vec<RecordBatch> {
    file.read_table("weather", read).unwrap().collect::<Result<Vec<_>, _>>().unwrap()
}

fn dict_value(b: &RecordBatch, col: &str, i: usize) -> String {
    let d = b.column_by_name(col).unwrap().as_dictionary::<Int32Type>();
    let k = d.keys().value(i) as usize;
    d.values().as_string::<i32>().value(k).to_string()
}

#[test]
fn test_sample_matches_generator_facts() {
    let exp = expected();
    let file = TsFile::open(repo_path("data/sample.tsfile")).unwrap();
    assert_eq!(file.table_names(), vec!["weather".to_string()]);
    assert_eq!(file.devices("weather").unwrap().len() as u64, exp["device_count"].as_u64().unwrap());
    let batches = read_all(&file, TableRead::default());
    let schema = batches[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let want: Vec<&str> = exp["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, want);

    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows as u64, exp["row_count"].as_u64().unwrap());
    for (col, n) in exp["non_null_counts"].as_object().unwrap() {
        let got: usize = batches.iter().map(|b| b.num_rows() - b.column_by_name(col).unwrap().null_count()).sum();
        assert_eq!(got as u64, n.as_u64().unwrap(), "non-null count of {col}");
    }
    let (mut tmin, mut tmax) = (i64::MAX, i64::MIN);
    let (mut energy, mut pressure, mut online) = (0i128, 0i64, 0usize);
    let (mut temp_min, mut temp_max) = (f64::MAX, f64::MIN);
    let mut regions: BTreeMap<String, u64> = BTreeMap::new();
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    for b in &batches {
        let t = b.column(0).as_primitive::<TimestampMillisecondType>();
        tmin = tmin.min(arrow_arith::aggregate::min(t).unwrap());
        tmax = tmax.max(arrow_arith::aggregate::max(t).unwrap());
        energy += b
            .column_by_name("energy_wh")
            .unwrap()
            .as_primitive::<Int64Type>()
            .values()
            .iter()
            .map(|&v| i128::from(v))
            .sum::<i128>();
        pressure +=
            b.column_by_name("pressure").unwrap().as_primitive::<Int32Type>().values().iter().map(|&v| i64::from(v)).sum::<i64>();
        online += b.column_by_name("online").unwrap().as_boolean().true_count();
        for &v in b.column_by_name("temperature").unwrap().as_primitive::<Float64Type>().values().iter() {
            temp_min = temp_min.min(v);
            temp_max = temp_max.max(v);
        }
        *regions.entry(dict_value(b, "region", 0)).or_default() += b.num_rows() as u64;
        let s = b.column_by_name("status").unwrap().as_string::<i32>();
        for i in 0..s.len() {
            *status.entry(s.value(i).to_string()).or_default() += 1;
        }
    }
    assert_eq!(tmin, exp["time_min"].as_i64().unwrap());
    assert_eq!(tmax, exp["time_max"].as_i64().unwrap());
    assert_eq!(energy, i128::from(exp["sum_energy_wh"].as_i64().unwrap()));
    assert_eq!(pressure, exp["sum_pressure"].as_i64().unwrap());
    assert_eq!(online as u64, exp["online_true_count"].as_u64().unwrap());
    assert_eq!(temp_min, exp["temperature_min"].as_f64().unwrap());
    assert_eq!(temp_max, exp["temperature_max"].as_f64().unwrap());
    for (r, n) in exp["rows_per_region"].as_object().unwrap() {
        assert_eq!(regions.get(r).copied(), n.as_u64(), "region {r}");
    }
    for (s, n) in exp["status_counts"].as_object().unwrap() {
        assert_eq!(status.get(s).copied(), n.as_u64(), "status {s}");
    }
    assert_eq!(dict_value(&batches[0], "device", 0), exp["rows_first_device"]["device"].as_str().unwrap());
}

#[test]
fn test_sample_filters_agree() {
    let file = TsFile::open(repo_path("data/sample.tsfile")).unwrap();
    let all = read_all(&file, TableRead::default().with_projection(["time", "device", "temperature"]));
    let (lo, hi) = (1_704_100_000_000i64, 1_704_110_000_000i64);
    let mut want = 0usize;
    for b in &all {
        let t = b.column(0).as_primitive::<TimestampMillisecondType>();
        want += t.values().iter().filter(|&&v| v >= lo && v <= hi).count();
    }
    let ranged = read_all(&file, TableRead::default().with_projection(["time"]).with_time_range(lo, hi).with_batch_size(1000));
    let got: usize = ranged.iter().map(|b| b.num_rows()).sum();
    assert_eq!(got, want);
    assert!(want > 0 && want < all.iter().map(|b| b.num_rows()).sum::<usize>());
    assert!(ranged.iter().all(|b| b.num_rows() <= 1000 && b.num_columns() == 1));
    // The kept timestamps are copied out of their pages: a batch does not hold a whole page's
    // buffer for the few rows of a narrow range.
    let narrow = read_all(&file, TableRead::default().with_projection(["time"]).with_time_range(lo, lo + 60_000));
    let rows: usize = narrow.iter().map(|b| b.num_rows()).sum();
    assert!(rows > 0 && rows < want / 10, "{rows}");
    for b in &narrow {
        // One batch per device (fewer rows than the batch size), not sliced.
        let held: usize = b.column(0).to_data().buffers().iter().map(|b| b.capacity()).sum();
        assert!(held <= 16 * b.num_rows() + 64, "{held} bytes of timestamps held for {} rows", b.num_rows());
    }

    let dev = file.devices("weather").unwrap()[7].clone();
    let one = read_all(&file, TableRead::default().with_devices(vec![dev.clone()]).with_projection(["device", "time"]));
    assert!(!one.is_empty());
    for b in &one {
        for i in 0..b.num_rows() {
            assert_eq!(Some(dict_value(b, "device", i).as_str()), dev.segment(3));
        }
    }
    let none = read_all(&file, TableRead::default().with_devices(vec![DeviceId::from_strs(&["weather", "x", "y", "z"])]));
    assert!(none.is_empty());
    let err = file.read_table("weather", TableRead::default().with_projection(["nope"])).unwrap_err();
    assert!(err.to_string().contains("column 'nope'"), "{err}");
    let err = file.read_table("nope", TableRead::default()).unwrap_err();
    assert!(err.to_string().contains("table 'nope'"), "{err}");
}

#[test]
fn test_sample_time_ranges_equal_the_filtered_full_read() {
    // A time range trims every page to its rows (value streams decoded only as far as the
    // range needs): every column must equal the full read filtered.
    use datafusion::arrow::compute::{cast, concat_batches, filter_record_batch};
    use datafusion::arrow::datatypes::DataType;
    let file = TsFile::open(repo_path("data/sample.tsfile")).unwrap();
    let plain = |batches: &[RecordBatch]| -> RecordBatch {
        let b = concat_batches(&batches[0].schema(), batches).unwrap();
        let cols = b.columns().iter().map(|c| match c.data_type() {
            DataType::Dictionary(_, _) => cast(c, &DataType::Utf8).unwrap(),
            _ => c.clone(),
        });
        RecordBatch::try_from_iter(b.schema().fields().iter().map(|f| f.name().clone()).zip(cols)).unwrap()
    };
    let all = plain(&read_all(&file, TableRead::default()));
    let times = all.column(0).as_primitive::<TimestampMillisecondType>();
    let (t0, t1) = (times.values().iter().min().copied().unwrap(), times.values().iter().max().copied().unwrap());
    let span = t1 - t0;
    for (lo, hi) in [
        (t0, t0 + span / 100),
        (t0 + span / 3, t0 + span / 3 + span / 50),
        (times.value(times.len() / 2), times.value(times.len() / 2)),
        (t0 + span / 10, t0 + span * 9 / 10),
        (t1 - span / 100, t1),
    ] {
        let mask = datafusion::arrow::array::BooleanArray::from_iter(times.values().iter().map(|&t| Some(t >= lo && t <= hi)));
        let want = filter_record_batch(&all, &mask).unwrap();
        let got = read_all(&file, TableRead::default().with_time_range(lo, hi));
        assert!(want.num_rows() > 0, "[{lo}, {hi}]");
        let got = plain(&got);
        assert_eq!(got.num_rows(), want.num_rows(), "[{lo}, {hi}]");
        for (i, f) in want.schema().fields().iter().enumerate() {
            assert_eq!(got.column(i).to_data(), want.column(i).to_data(), "[{lo}, {hi}] column {}", f.name());
        }
    }
}

#[test]
fn test_sample_from_bytes_and_object_store_agree() {
    let bytes = Bytes::from(std::fs::read(repo_path("data/sample.tsfile")).unwrap());
    let mem = TsFile::from_bytes(bytes.clone()).unwrap();
    let store: Arc<dyn object_store::ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let path = object_store::path::Path::from("dir/sample.tsfile");
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let from_store = rt.block_on(async {
        store.put(&path, bytes.into()).await.unwrap();
        TsFile::from_object_store(store.clone(), &path, TsFileOptions::default()).await.unwrap()
    });
    let read = || TableRead::default().with_projection(["time", "energy_wh"]).with_time_range(0, 1_704_080_000_000);
    let a: usize = read_all(&mem, read()).iter().map(|b| b.num_rows()).sum();
    let b: usize = read_all(&from_store, read()).iter().map(|b| b.num_rows()).sum();
    assert_eq!(a, b);
    assert!(a > 0);
}
