//! Resource limits: each one, set below what a real file needs, fails the read with
//! `LimitExceeded` naming its option key — through the library API and through SQL
//! `OPTIONS`, where `max_decoded_bytes` is one budget for the whole query, shared by its
//! partitions and files.

use datafusion_tsfile::datafusion::{register_tsfile, TsFileReadOptions};
use datafusion_tsfile::{TableRead, TsFile, TsFileError, TsFileOptions};

use crate::common::repo_path;
use crate::sql::{block_on, ctx};

const PLAIN: &str = "tests/data/encrypted/plain.tsfile";

/// Read everything of a file with `opts`; the first error.
fn read_all(rel: &str, opts: TsFileOptions) -> Result<usize, TsFileError> {
    let f = TsFile::open_with(repo_path(rel), opts)?;
    let mut rows = 0;
    for t in f.table_names() {
        for b in f.read_table(&t, TableRead::default())? {
            rows += b?.num_rows();
        }
    }
    for p in f.tree_prefixes() {
        for d in f.devices(&p)? {
            rows += f.read_tree_device(&d, None, None)?.num_rows();
        }
    }
    Ok(rows)
}

/// The read fails with `LimitExceeded` whose `what` names `key`; and succeeds by default.
fn assert_limit(rel: &str, key: &str, set: impl FnOnce(&mut TsFileOptions)) -> (u64, u64) {
    assert!(read_all(rel, TsFileOptions::default()).unwrap() > 0, "{rel} reads with the defaults");
    let mut opts = TsFileOptions::default();
    set(&mut opts);
    let e = read_all(rel, opts).expect_err("the limit is exceeded");
    match e.root() {
        TsFileError::LimitExceeded { what, value, limit } => {
            assert!(what.contains(&format!("(option {key})")), "{rel}: {what}");
            assert!(value > limit, "{e}");
            assert!(e.to_string().contains(rel.rsplit('/').next().unwrap()), "the file is not named: {e}");
            (*value, *limit)
        }
        other => panic!("{rel}: expected LimitExceeded for {key}, got {other:?}"),
    }
}

#[test]
fn test_limit_max_metadata_bytes() {
    let (value, limit) = assert_limit(PLAIN, "max_metadata_bytes", |o| o.read.max_metadata_bytes = 100);
    assert_eq!((value, limit), (220, 100));
}

#[test]
fn test_limit_max_page_bytes() {
    assert_limit(PLAIN, "max_page_bytes", |o| o.read.decode.max_page_bytes = 16);
    assert_limit("tests/data/corpus/files/tree_enc_int64.tsfile", "max_page_bytes", |o| o.read.decode.max_page_bytes = 200);
}

#[test]
fn test_limit_max_page_values() {
    assert_limit("tests/data/corpus/files/tree_enc_int64.tsfile", "max_page_values", |o| o.read.decode.max_page_values = 10);
}

#[test]
fn test_limit_max_string_bytes() {
    assert_limit("tests/data/corpus/files/tree_utf8.tsfile", "max_string_bytes", |o| o.read.decode.max_string_bytes = 8);
    // Dictionary entries are strings too.
    assert_limit("tests/data/corpus/files/tree_enc_text.tsfile", "max_string_bytes", |o| o.read.decode.max_string_bytes = 4);
}

#[test]
fn test_limit_max_dictionary_bytes() {
    let (value, _) = assert_limit("tests/data/corpus/files/tree_enc_text.tsfile", "max_dictionary_bytes", |o| {
        o.read.decode.max_dictionary_bytes = 32
    });
    assert!(value > 32);
}

#[test]
fn test_limit_max_decoded_bytes() {
    assert_limit(PLAIN, "max_decoded_bytes", |o| o.read.max_decoded_bytes = 64);
    assert_limit("tests/data/corpus/files/tree_extremes.tsfile", "max_decoded_bytes", |o| o.read.max_decoded_bytes = 256);
    // The budget is per read: enough for one read is enough for each of several reads.
    let mut opts = TsFileOptions::default();
    opts.read.max_decoded_bytes = 4096;
    let f = TsFile::open_with(repo_path(PLAIN), opts).unwrap();
    for _ in 0..3 {
        let rows: usize = f.read_table("t1", TableRead::default()).unwrap().map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, 5);
    }
}

/// SQL: every limit is an option key, and `max_decoded_bytes` bounds the whole query.
#[test]
fn test_limit_sql_options_and_shared_query_budget() {
    let path = repo_path(PLAIN);
    let path = path.to_str().unwrap();
    block_on(async {
        // Each key is accepted and enforced.
        for (key, value) in
            [("max_page_bytes", "16"), ("max_decoded_bytes", "64"), ("max_metadata_bytes", "100"), ("max_page_values", "1")]
        {
            let c = ctx(2);
            let sql = format!("CREATE EXTERNAL TABLE t STORED AS TSFILE LOCATION '{path}' OPTIONS ('{key}' '{value}')");
            datafusion_tsfile::datafusion::register_tsfile_format(&c).unwrap();
            let err = match c.sql(&sql).await {
                Err(e) => e.to_string(),
                Ok(_) => c.sql("SELECT * FROM t").await.unwrap().collect().await.unwrap_err().to_string(),
            };
            assert!(err.contains(&format!("(option {key})")), "{key}: {err}");
        }
        // The smallest power of two that one copy of the file fits in ...
        let mut budget = 16u64;
        loop {
            let c = ctx(4);
            let mut o = TsFileReadOptions::default();
            o.read.max_decoded_bytes = budget;
            register_tsfile(&c, "t", &[path], o).await.unwrap();
            if c.sql("SELECT * FROM t").await.unwrap().collect().await.is_ok() {
                break;
            }
            budget *= 2;
            assert!(budget < 1 << 20, "plain.tsfile does not fit in 1 MiB of decoded values");
        }
        // ... is too small for four copies scanned by four partitions: the budget is shared.
        let dir = std::env::temp_dir().join(format!("tsfile-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..4 {
            std::fs::copy(path, dir.join(format!("copy{i}.tsfile"))).unwrap();
        }
        let c = ctx(4);
        let mut o = TsFileReadOptions::default();
        o.read.max_decoded_bytes = budget;
        register_tsfile(&c, "t", &[dir.to_str().unwrap()], o.clone()).await.unwrap();
        let err = c.sql("SELECT * FROM t").await.unwrap().collect().await.unwrap_err().to_string();
        assert!(err.contains("(option max_decoded_bytes)"), "{err}");
        // With four times the budget the four copies read.
        o.read.max_decoded_bytes = budget * 4;
        let c = ctx(4);
        register_tsfile(&c, "t", &[dir.to_str().unwrap()], o).await.unwrap();
        let b = c.sql("SELECT * FROM t").await.unwrap().collect().await.unwrap();
        assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), 20);
        std::fs::remove_dir_all(&dir).unwrap();
        // A new query starts with a fresh budget.
        let c2 = ctx(4);
        let mut o = TsFileReadOptions::default();
        o.read.max_decoded_bytes = budget;
        register_tsfile(&c2, "t", &[path], o).await.unwrap();
        for _ in 0..3 {
            let b = c2.sql("SELECT * FROM t").await.unwrap().collect().await.unwrap();
            assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), 5);
        }
    });
}
