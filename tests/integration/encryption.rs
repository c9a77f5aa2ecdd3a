//! Encrypted TsFiles: the vendored samples (legacy AES128 levels 1 and 2, SM4128, the C++
//! writer's key-less flag) read back equal to their plaintext twin with the right key and
//! fail clearly without it; Page-AEAD files written here with the test writer round-trip,
//! and any tampering (a flipped byte, a swapped ordinal, a wrong key) is an error.

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch};
use datafusion_tsfile::arrow::schema::TimeUnit;
use datafusion_tsfile::crypto::{EncryptionKeys, LegacyAlgorithm, MasterKey};
use datafusion_tsfile::datafusion::{register_tsfile, register_tsfile_format, TsFileReadOptions};
use datafusion_tsfile::{TableRead, TsFile, TsFileError, TsFileOptions};

use crate::common::repo_path;
use crate::sql::{block_on, ctx, rows_of};
use crate::writer::{write_tsfile, write_tsfile_sealed, Device, Sealing, Table, Val, DOUBLE, INT64};

const MASTER: &str = "tsfile-rs-master";

fn sample(name: &str) -> String {
    repo_path(&format!("tests/data/encrypted/{name}.tsfile")).display().to_string()
}

fn keys(master: &str) -> EncryptionKeys {
    EncryptionKeys::default().with_master_key(MasterKey::parse(master).unwrap())
}

fn read(file: &TsFile, table: &str) -> Result<RecordBatch, TsFileError> {
    let batches: Vec<RecordBatch> = file.read_table(table, TableRead::default())?.collect::<Result<_, _>>()?;
    let schema = batches.first().map(|b| b.schema()).unwrap_or_else(|| file.arrow_schema(table).unwrap());
    Ok(datafusion::arrow::compute::concat_batches(&schema, &batches).unwrap())
}

fn open(name: &str, keys: EncryptionKeys) -> TsFile {
    TsFile::open_with(sample(name), TsFileOptions::default().with_keys(keys)).unwrap()
}

/// The plaintext twin holds the five documented rows.
fn plain() -> RecordBatch {
    let b = read(&open("plain", EncryptionKeys::default()), "t1").unwrap();
    assert_eq!(b.num_rows(), 5);
    let v = b.column_by_name("v").unwrap().as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(v.values().to_vec(), vec![10, 20, 30, 100, 200]);
    let x = b.column_by_name("x").unwrap().as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(x.values().to_vec(), vec![0.5, 1.5, 2.5, -1.0, -2.0]);
    b
}

#[test]
fn test_encrypted_samples_equal_their_plaintext_twin() {
    let want = plain();
    for (name, k) in [
        ("aes128_level1", EncryptionKeys::default()),
        ("sm4128_level1", EncryptionKeys::default()),
        ("aes128_level2", keys(MASTER)),
        ("aes128_level2", keys("747366696c652d72732d6d6173746572")),
    ] {
        let f = open(name, k);
        assert_eq!(read(&f, "t1").unwrap(), want, "{name}");
    }
}

#[test]
fn test_level2_needs_the_master_key() {
    // No key: metadata reads, values fail with a clear error naming the file.
    let f = open("aes128_level2", EncryptionKeys::default());
    assert_eq!(f.table_names(), vec!["t1".to_string()]);
    assert_eq!(f.devices("t1").unwrap().len(), 2);
    let e = read(&f, "t1").unwrap_err();
    assert!(matches!(e.root(), TsFileError::Encrypted { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("master key") && msg.contains("aes128_level2.tsfile"), "{msg}");
    // A wrong key: the scheme has no tag, so the page fails to decompress; the message
    // says the key does not match the file's derivation.
    let wrong = "0123456789abcdef";
    let e = read(&open("aes128_level2", keys(wrong)), "t1").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("wrong master_key?"), "{msg}");
    assert!(!msg.contains(wrong) && !msg.contains(MASTER), "{msg}");
}

#[test]
fn test_cpp_flag_without_key_material_is_rejected() {
    // The C++ writer's encrypt flag: level 2, no type, no key. Pages are in fact plaintext,
    // but the file says otherwise: refuse, with or without a key.
    for k in [EncryptionKeys::default(), keys(MASTER)] {
        let f = open("cpp_flag_level2_nokey", k);
        assert_eq!(f.table_names(), vec!["t1".to_string()]);
        let e = read(&f, "t1").unwrap_err();
        assert!(matches!(e.root(), TsFileError::Encrypted { .. }), "{e:?}");
        assert!(e.to_string().contains("without an encryptType"), "{e}");
    }
}

#[test]
fn test_sql_reads_encrypted_files_with_the_master_key_option() {
    block_on(async {
        let c = ctx(2);
        register_tsfile_format(&c).unwrap();
        let l2 = sample("aes128_level2");
        c.sql(&format!("CREATE EXTERNAL TABLE good STORED AS TSFILE LOCATION '{l2}' OPTIONS ('master_key' '{MASTER}')"))
            .await
            .unwrap();
        let rows = rows_of(
            &c.sql("SELECT dev, sum(v), sum(x) FROM good GROUP BY dev ORDER BY dev").await.unwrap().collect().await.unwrap(),
        );
        assert_eq!(
            format!("{rows:?}"),
            format!(
                r#"[[String("d1"), Number(60), String("{}")], [String("d2"), Number(300), String("{}")]]"#,
                f64_cell(4.5),
                f64_cell(-3.0)
            )
        );
        // EXPLAIN never shows the key.
        let plan = c.sql("EXPLAIN SELECT * FROM good WHERE v > 15").await.unwrap().collect().await.unwrap();
        let text = format!("{:?}", rows_of(&plan));
        assert!(!text.contains(MASTER) && text.contains("DataSourceExec"), "{text}");
        // Without the key: statistics (plaintext metadata) still answer count(*) and a
        // whole-table sum; reading values is an error.
        c.sql(&format!("CREATE EXTERNAL TABLE locked STORED AS TSFILE LOCATION '{l2}'")).await.unwrap();
        let n = rows_of(&c.sql("SELECT count(*), sum(v) FROM locked").await.unwrap().collect().await.unwrap());
        assert_eq!(format!("{n:?}"), "[[Number(5), Number(360)]]");
        let e = c.sql("SELECT sum(v) FROM locked WHERE v > 0").await.unwrap().collect().await.unwrap_err().to_string();
        assert!(e.contains("encrypted file") && e.contains("master key"), "{e}");
        // A malformed key is an error that does not repeat it.
        let e = c
            .sql(&format!("CREATE EXTERNAL TABLE bad STORED AS TSFILE LOCATION '{l2}' OPTIONS ('master_key' 'not-a-key')"))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("master_key") && !e.contains("not-a-key"), "{e}");
    });
}

/// How the conformance cells render a DOUBLE (exact bits).
fn f64_cell(v: f64) -> String {
    format!("f64:{:016x}", v.to_bits())
}

/// A small table file: two devices, INT64 and DOUBLE fields with nulls, several pages.
fn table_devices() -> (Vec<Device>, Vec<Table>) {
    let dev = |name: &str, base: i64| Device::Aligned {
        segments: vec!["t".into(), name.into()],
        times: (0..25).map(|i| 1000 + i * 10).collect(),
        columns: vec![
            ("a".into(), INT64, (0..25).map(|i| if i % 7 == 3 { None } else { Some(Val::I64(base + i)) }).collect()),
            ("b".into(), DOUBLE, (0..25).map(|i| Some(Val::F64(i as f64 * 0.25 - base as f64))).collect()),
        ],
    };
    let tables =
        vec![Table { name: "t".into(), tags: vec!["id".into()], fields: vec![("a".into(), INT64), ("b".into(), DOUBLE)] }];
    (vec![dev("d1", 0), dev("d2", 1000)], tables)
}

/// A tree device with non-aligned series (pages hold time and value streams).
fn tree_device() -> Device {
    Device::NonAligned {
        segments: vec!["root".into(), "sg".into(), "dev".into()],
        series: vec![
            ("s1".into(), INT64, (0..30).map(|i| (i * 2, Val::I64(i * i))).collect()),
            ("s2".into(), DOUBLE, (0..30).filter(|i| i % 3 == 0).map(|i| (i * 2, Val::F64(-(i as f64)))).collect()),
        ],
    }
}

const KEK: [u8; 16] = *b"0123456789abcdef";

fn aead(with_auth_field: bool) -> Sealing {
    Sealing::Aead { provider: "test-aead-provider".into(), kek: KEK, data_key: [0x5a; 16], file_id: [7; 16], with_auth_field }
}

fn from_bytes(bytes: Vec<u8>, keys: EncryptionKeys) -> TsFile {
    TsFile::from_source(
        Box::new(bytes::Bytes::from(bytes)),
        "sealed.tsfile".into(),
        TsFileOptions {
            read: datafusion_tsfile::read::ReadOptions {
                nonaligned_time_encoding: datafusion_tsfile::format::Encoding::Plain,
                ..Default::default()
            },
            keys,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Everything the file holds: the table, then the tree device.
fn read_everything(f: &TsFile) -> Result<(RecordBatch, RecordBatch), TsFileError> {
    let t = read(f, "t")?;
    let d = f.devices("root")?;
    Ok((t, f.read_tree_device(&d[0], None, None)?))
}

#[test]
fn test_sealed_files_round_trip() {
    let (mut devices, tables) = table_devices();
    devices.push(tree_device());
    let plain = read_everything(&from_bytes(write_tsfile(&devices, &tables, 10), EncryptionKeys::default())).unwrap();
    assert_eq!((plain.0.num_rows(), plain.1.num_rows()), (50, 30));
    assert_eq!(plain.0.column_by_name("a").unwrap().null_count(), 8);
    let legacy = |level: u8, algorithm: LegacyAlgorithm, type_name: &str| Sealing::Legacy {
        level,
        algorithm,
        data_key: *b"data-key-16bytes",
        master: KEK,
        type_name: type_name.into(),
    };
    for (sealing, k) in [
        (aead(false), keys("0123456789abcdef")),
        (aead(true), keys("hex:30313233343536373839616263646566")),
        (legacy(2, LegacyAlgorithm::Aes128, "org.apache.tsfile.encrypt.AES128"), keys("0123456789abcdef")),
        (legacy(1, LegacyAlgorithm::Aes128, "AES128"), EncryptionKeys::default()),
        (legacy(1, LegacyAlgorithm::Sm4, "SM4128"), EncryptionKeys::default()),
        (legacy(2, LegacyAlgorithm::Sm4, "org.apache.tsfile.encrypt.SM4128"), keys("0123456789abcdef")),
    ] {
        let bytes = write_tsfile_sealed(&devices, &tables, 10, &sealing);
        let got = read_everything(&from_bytes(bytes.clone(), k)).unwrap_or_else(|e| panic!("{sealing:?}: {e}"));
        assert_eq!(got, plain, "{sealing:?}");
        // Without keys (level 1 needs none), values fail closed; metadata stays readable.
        let locked = from_bytes(bytes, EncryptionKeys::default());
        assert_eq!(locked.devices("t").unwrap().len(), 2);
        let needs_key = !matches!(sealing, Sealing::Legacy { level: 1, .. });
        match read_everything(&locked) {
            Err(e) => assert!(needs_key && matches!(e.root(), TsFileError::Encrypted { .. }), "{sealing:?}: {e}"),
            Ok(v) => assert!(!needs_key && v == plain, "{sealing:?}"),
        }
    }
}

#[test]
fn test_aead_tampering_is_detected() {
    let (devices, tables) = table_devices();
    let bytes = write_tsfile_sealed(&devices, &tables, 10, &aead(false));
    let good = from_bytes(bytes.clone(), keys("0123456789abcdef"));
    assert_eq!(read(&good, "t").unwrap().num_rows(), 50);
    // Every page body byte, one at a time: each flip fails verification.
    let bodies = page_bodies(&good);
    assert!(bodies.len() >= 2 * 3 * 3, "{} pages", bodies.len());
    let mut checked = 0;
    for &(start, len) in &bodies {
        for at in [start, start + len / 2, start + len - 1] {
            let mut b = bytes.clone();
            b[at as usize] ^= 0x01;
            let e = read(&from_bytes(b, keys("0123456789abcdef")), "t").unwrap_err();
            assert!(matches!(e.root(), TsFileError::DecryptFailed { .. }), "byte {at}: {e:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, bodies.len() * 3);
    // Two chunks' ordinals swapped: the AAD no longer matches.
    let ords = ordinal_offsets(&good);
    let mut b = bytes.clone();
    let (x, y) = (ords[0] as usize, ords[1] as usize);
    let (ox, oy) = (b[x..x + 8].to_vec(), b[y..y + 8].to_vec());
    b[x..x + 8].copy_from_slice(&oy);
    b[y..y + 8].copy_from_slice(&ox);
    let e = read(&from_bytes(b, keys("0123456789abcdef")), "t").unwrap_err();
    assert!(matches!(e.root(), TsFileError::DecryptFailed { .. }), "{e:?}");
    // A wrong KEK fails the key unwrap; an unknown provider is reported as such.
    let e = match TsFile::from_source(
        Box::new(bytes::Bytes::from(bytes.clone())),
        "x".into(),
        TsFileOptions::default().with_keys(keys("fedcba9876543210")),
    ) {
        Ok(f) => read(&f, "t").unwrap_err(),
        Err(e) => e,
    };
    assert!(e.to_string().contains("does not unwrap"), "{e}");
    let other = keys("0123456789abcdef").with_aead_provider_id("acme-kms");
    let e = match TsFile::from_source(Box::new(bytes::Bytes::from(bytes)), "x".into(), TsFileOptions::default().with_keys(other))
    {
        Ok(f) => read(&f, "t").unwrap_err(),
        Err(e) => e,
    };
    assert!(e.to_string().contains("no key provider 'test-aead-provider'"), "{e}");
}

/// `(offset, length)` of every page body of table `t`'s chunks.
fn page_bodies(f: &TsFile) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for h in chunk_headers(f) {
        let chunk = f.structure().read_chunk(h.offset).unwrap();
        for p in datafusion_tsfile::format::chunk::PageIter::new(&chunk.header, &chunk.data).unwrap() {
            let p = p.unwrap();
            out.push((p.header.data_offset, u64::from(p.header.compressed_size)));
        }
    }
    out
}

/// Offsets of the chunk ordinals of table `t`'s chunks.
fn ordinal_offsets(f: &TsFile) -> Vec<u64> {
    chunk_headers(f).iter().map(|h| h.offset + h.header_len - 8).collect()
}

fn chunk_headers(f: &TsFile) -> Vec<datafusion_tsfile::format::ChunkHeader> {
    let r = f.structure();
    let mut out = Vec::new();
    for d in r.devices("t").unwrap() {
        for s in r.series(&d).unwrap() {
            for c in &s.chunks {
                let h = r.read_chunk(c.offset).unwrap().header;
                assert!(h.chunk_ordinal.is_some());
                out.push(h);
            }
        }
    }
    out
}

#[test]
fn test_sql_over_sealed_aead_file() {
    let (mut devices, tables) = table_devices();
    devices.push(tree_device());
    let dir = std::env::temp_dir().join(format!("tsfile-aead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sealed.tsfile");
    std::fs::write(&path, write_tsfile_sealed(&devices, &tables, 10, &aead(false))).unwrap();
    block_on(async {
        let c = ctx(2);
        let opts = TsFileReadOptions::default().with_keys(keys("0123456789abcdef")).with_time_unit(TimeUnit::Raw).with_table("t");
        register_tsfile(&c, "s", &[path.to_str().unwrap()], opts).await.unwrap();
        let rows = rows_of(
            &c.sql("SELECT id, count(a), sum(a), min(b) FROM s WHERE time >= 1100 GROUP BY id ORDER BY id")
                .await
                .unwrap()
                .collect()
                .await
                .unwrap(),
        );
        // Rows 10..25 of each device; a is null where i % 7 == 3 (i = 10, 17, 24).
        let sum_a = |base: i64| (10..25).filter(|i| i % 7 != 3).map(|i| base + i).sum::<i64>();
        assert_eq!(
            format!("{rows:?}"),
            format!(
                "[[String(\"d1\"), Number(12), Number({}), String(\"{}\")], [String(\"d2\"), Number(12), Number({}), String(\"{}\")]]",
                sum_a(0),
                f64_cell(2.5),
                sum_a(1000),
                f64_cell(-997.5)
            )
        );
        // The tree-model table of the same file (streaming merge of non-aligned series).
        let tree_opts =
            TsFileReadOptions::default().with_keys(keys("0123456789abcdef")).with_table("root").with_time_unit(TimeUnit::Raw);
        let tree_opts = TsFileReadOptions {
            read: datafusion_tsfile::read::ReadOptions {
                nonaligned_time_encoding: datafusion_tsfile::format::Encoding::Plain,
                ..tree_opts.read
            },
            ..tree_opts
        };
        register_tsfile(&c, "tree", &[path.to_str().unwrap()], tree_opts).await.unwrap();
        let rows = rows_of(
            &c.sql("SELECT count(*), count(s1), sum(s1), count(s2), min(s2) FROM tree WHERE time >= 10")
                .await
                .unwrap()
                .collect()
                .await
                .unwrap(),
        );
        // time = 2i: i in 5..30; s1 = i*i; s2 where i % 3 == 0 (i = 6..27: 8 points, min -27).
        let sum: i64 = (5..30).map(|i| i * i).sum();
        assert_eq!(
            format!("{rows:?}"),
            format!("[[Number(25), Number(25), Number({sum}), Number(8), String(\"{}\")]]", f64_cell(-27.0))
        );
        let locked = ctx(1);
        register_tsfile(&locked, "s", &[path.to_str().unwrap()], TsFileReadOptions::default().with_table("t")).await.unwrap();
        let e = locked.sql("SELECT sum(a) FROM s WHERE a IS NOT NULL").await.unwrap().collect().await.unwrap_err().to_string();
        assert!(e.contains("Page-AEAD") && e.contains("key is required"), "{e}");
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_keys_and_options_are_never_printed() {
    let o = TsFileReadOptions::default().with_keys(keys(MASTER));
    let dbg = format!("{o:?}");
    assert!(!dbg.contains(MASTER) && dbg.contains("<redacted>"), "{dbg}");
    let f = open("aes128_level2", keys(MASTER));
    let dbg = format!("{f:?} {:?}", f.structure().decryptor());
    assert!(!dbg.contains(MASTER) && !dbg.contains("276d75"), "{dbg}");
}
