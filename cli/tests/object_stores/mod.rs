//! `tsfile` against real object stores: moto's S3 API and a Range-aware HTTP server, both on
//! 127.0.0.1 (see [`servers`]). Each test writes under its own key prefix of bucket `iot`.

mod servers;

use std::process::Command;
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use servers::servers;

use super::{root, sample_facts, scratch, sql_rows};

/// Put `bytes` at `key` in bucket `iot`.
fn put(key: &str, bytes: Vec<u8>) {
    put_in(&servers().s3, "iot", ("test", "test"), key, bytes);
}

/// Put `bytes` at `key` in `bucket` of the S3 server at `endpoint`, signed with `credentials`.
fn put_in(endpoint: &str, bucket: &str, credentials: (&str, &str), key: &str, bytes: Vec<u8>) {
    let store = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name(bucket)
        .with_access_key_id(credentials.0)
        .with_secret_access_key(credentials.1)
        .build()
        .unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(store);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(store.put(&StorePath::from(key), PutPayload::from(bytes))).unwrap();
}

fn sample_bytes() -> Vec<u8> {
    std::fs::read(root().join("data/sample.tsfile")).unwrap()
}

/// `tsfile ARGS` with no AWS settings from this process's environment, plus `env`.
fn tsfile_env(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tsfile"));
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd.args(args).envs(env.iter().copied()).current_dir(root()).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The rows of the last statement of `tsfile sql -c …` as JSON objects.
fn sql_rows_env(commands: &[&str], env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let mut args = vec!["sql", "-q", "--format", "nd-json"];
    for c in commands {
        args.extend(["-c", c]);
    }
    let (ok, out, err) = tsfile_env(&args, env);
    assert!(ok, "{commands:?}: {err}");
    out.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The credentials of moto as the AWS environment variables object_store reads.
fn aws_env() -> Vec<(&'static str, &'static str)> {
    let endpoint: &'static str = Box::leak(servers().s3.clone().into_boxed_str());
    vec![
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT", endpoint),
        ("AWS_ALLOW_HTTP", "true"),
    ]
}

/// The `aws.*` table options reaching moto, as an `OPTIONS` list's entries.
fn aws_options() -> String {
    format!(
        "'aws.access_key_id' 'test', 'aws.secret_access_key' 'test', 'aws.region' 'us-east-1', \
         'aws.endpoint' '{}', 'aws.allow_http' 'true'",
        servers().s3
    )
}

#[test]
fn test_s3_ddl_with_aws_and_tsfile_options_in_one_list() {
    put("ddl/a.tsfile", sample_bytes());
    put("ddl/b.tsfile", sample_bytes());
    put("ddl/notes.txt", b"not a tsfile".to_vec());
    let facts = sample_facts();
    let n = facts["row_count"].as_u64().unwrap();
    let query = "SELECT count(*) AS n, sum(energy_wh) AS e, count(DISTINCT device) AS d FROM w";
    for (location, files) in
        [("s3://iot/ddl/", 2), ("s3://iot/ddl/a.tsfile", 1), ("s3://iot/ddl/[ab].tsfile", 2), ("s3://iot/ddl/b*", 1)]
    {
        let ddl = format!(
            "CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION '{location}' OPTIONS ({}, 'tsfile.table' 'weather')",
            aws_options()
        );
        let rows = sql_rows_env(&[&ddl, query], &[]);
        assert_eq!(rows[0]["n"].as_u64(), Some(files * n), "{location}");
        let e = facts["sum_energy_wh"].as_f64().unwrap() * files as f64;
        assert!((rows[0]["e"].as_f64().unwrap() - e).abs() <= 1e-9 * e.abs(), "{location}: {rows:?}");
        assert_eq!(rows[0]["d"], facts["device_count"], "{location}");
    }
    // No credential in what a user can print: the table's definition, plans, settings.
    let ddl = format!(
        "CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION 's3://iot/ddl/' OPTIONS ({}, 'aws.session_token' 'TOKEN-5678', \
         'tsfile.master_key' 'KEY-9012-abcdefg')",
        aws_options().replace("'aws.secret_access_key' 'test'", "'aws.secret_access_key' 'SECRET-1234'")
    );
    let (ok, out, err) = tsfile_env(
        &[
            "sql",
            "-q",
            "--format",
            "csv",
            "-c",
            &ddl,
            "-c",
            "SHOW CREATE TABLE w",
            "-c",
            "EXPLAIN VERBOSE SELECT count(*) FROM w WHERE temperature > 3",
            "-c",
            "SELECT * FROM information_schema.df_settings",
        ],
        &[],
    );
    assert!(ok, "{err}");
    assert!(out.contains("CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION 's3://iot/ddl/'"), "{out}");
    assert!(out.contains("DataSourceExec"), "{out}");
    for secret in ["SECRET-1234", "TOKEN-5678", "KEY-9012"] {
        assert!(!out.contains(secret) && !err.contains(secret), "{secret} shown:\n{out}{err}");
    }
    // A misspelt object-store option is datafusion-cli's error (as with Parquet; its text
    // does not name the key); a misspelt TsFile one is ours.
    let ddl = |extra: &str| {
        format!("CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION 's3://iot/ddl/' OPTIONS ({}, {extra})", aws_options())
    };
    let (ok, _, err) = tsfile_env(&["sql", "-q", "-c", &ddl("'aws.acess_key_id' 'x'")], &[]);
    assert!(!ok && err.contains("not found on AwsOptions"), "{err}");
    let (ok, _, err) = tsfile_env(&["sql", "-q", "-c", &ddl("'tsfile.colour' 'red'")], &[]);
    assert!(!ok && err.contains("unknown TsFile option 'colour'"), "{err}");
}

#[test]
fn test_s3_url_tables_and_metadata_with_environment_credentials() {
    put("url/sample.tsfile", sample_bytes());
    let facts = sample_facts();
    let env = aws_env();
    let rows = sql_rows_env(&["SELECT count(*) AS n FROM 's3://iot/url/sample.tsfile'"], &env);
    assert_eq!(rows[0]["n"], facts["row_count"]);
    let rows = sql_rows_env(
        &["SELECT sum(point_count) AS n FROM tsfile_metadata('s3://iot/url/sample.tsfile') WHERE measurement = 'humidity'"],
        &env,
    );
    assert_eq!(rows[0]["n"], facts["non_null_counts"]["humidity"]);
    // EXPLAIN ANALYZE shows the requests and bytes of the scan.
    let (ok, out, err) = tsfile_env(
        &[
            "sql",
            "-q",
            "-c",
            "EXPLAIN ANALYZE SELECT sum(temperature * 2) FROM 's3://iot/url/sample.tsfile' WHERE device = 'ws-central-0-0'",
        ],
        &env,
    );
    assert!(ok, "{err}");
    let metric = |name: &str| {
        let at = out.find(&format!(" {name}=")).unwrap_or_else(|| panic!("no {name} in {out}"));
        let digits: String = out[at + name.len() + 2..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        digits.parse::<f64>().unwrap()
    };
    assert!(metric("requests") >= 1.0 && metric("bytes_scanned") > 0.0, "{out}");
    assert_eq!(metric("devices_pruned") + 1.0, facts["device_count"].as_f64().unwrap(), "{out}");
    // A glob in the URL: the files it matches (two copies, one other object).
    put("url/copy.tsfile", sample_bytes());
    put("url/other.tsfile", b"not read".to_vec());
    let rows = sql_rows_env(
        &["SELECT count(DISTINCT file) AS files, sum(point_count) AS n FROM tsfile_metadata('s3://iot/url/[cs]*.tsfile') \
           WHERE measurement = 'humidity'"],
        &env,
    );
    assert_eq!(rows[0]["files"], 2);
    assert_eq!(rows[0]["n"].as_u64(), facts["non_null_counts"]["humidity"].as_u64().map(|n| 2 * n));
}

#[test]
fn test_http_with_range_requests() {
    let facts = sample_facts();
    let url = format!("{}/sample.tsfile", servers().http);
    let rows = sql_rows_env(&[&format!("SELECT count(*) AS n, count(humidity) AS h FROM '{url}'")], &[]);
    assert_eq!(rows[0]["n"], facts["row_count"]);
    assert_eq!(rows[0]["h"], facts["non_null_counts"]["humidity"]);
}

/// A failing `tsfile sql -c`: one `error: ` line on stderr that names `needle`.
fn assert_one_line_error(sql: &str, env: &[(&str, &str)], needle: &str) {
    let (ok, out, err) = tsfile_env(&["sql", "-q", "-c", sql], env);
    assert!(!ok, "{sql} succeeded: {out}");
    assert!(err.starts_with("error: ") && err.lines().count() == 1, "{sql}: {err}");
    assert!(err.contains(needle), "{sql}: expected '{needle}' in {err}");
}

#[test]
fn test_missing_objects_and_misbehaving_servers_are_one_line_errors() {
    let env = aws_env();
    assert_one_line_error("SELECT count(*) FROM 's3://iot/nothing/here.tsfile'", &env, "s3://iot/nothing/here.tsfile");
    let http = &servers().http;
    assert_one_line_error(&format!("SELECT count(*) FROM '{http}/missing.tsfile'"), &[], "missing.tsfile");
    // A server that ignores Range (object_store refuses its answer; schema inference names
    // the store path, not the whole URL) and one that drops the connection mid-body.
    let url = format!("{http}/no-range/sample.tsfile");
    assert_one_line_error(&format!("SELECT count(*) FROM '{url}'"), &[], "Range request not supported by no-range/sample.tsfile");
    let url = format!("{http}/cut/sample.tsfile");
    assert_one_line_error(&format!("SELECT count(*), sum(energy_wh) FROM '{url}'"), &[], "cut/sample.tsfile");
}

/// An object replaced between planning and reading: the shell reads statements from its
/// standard input; after the first answer the object becomes a truncated copy, then a
/// Parquet file. Each later statement is a one-line error naming the object, never an
/// answer from the old metadata.
#[test]
fn test_object_replaced_between_planning_and_reading() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let facts = sample_facts();
    let bytes = sample_bytes();
    put("replaced/a.tsfile", bytes.clone());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tsfile"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
        cmd.env_remove(k);
    }
    let mut child = cmd
        .args(["sql", "-q", "--format", "csv"])
        .envs(aws_env())
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "CREATE EXTERNAL TABLE r STORED AS TSFILE LOCATION 's3://iot/replaced/a.tsfile';").unwrap();
    writeln!(stdin, "SELECT count(*) AS n FROM r;").unwrap();
    let want = facts["row_count"].to_string();
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no answer before the replacement: {seen:?}");
        if line.trim() == want {
            break;
        }
        seen.push(line);
    }
    put("replaced/a.tsfile", bytes[..bytes.len() / 2].to_vec());
    writeln!(stdin, "SELECT sum(energy_wh) AS e FROM r;").unwrap();
    writeln!(stdin, "COPY (SELECT 1 AS x) TO 's3://iot/replaced/a.tsfile' STORED AS PARQUET;").unwrap();
    writeln!(stdin, "SELECT count(*) AS n FROM r;").unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(errors.len(), 2, "{err}");
    assert!(errors[0].contains("file s3://iot/replaced/a.tsfile: corrupt file tail"), "{err}");
    assert!(
        errors[1].contains("file s3://iot/replaced/a.tsfile: corrupt file head") && errors[1].contains("not a TsFile"),
        "{err}"
    );
    // The only answers after the first are COPY's row count.
    assert!(!rest.contains(&want) && !rest.contains(&facts["sum_energy_wh"].to_string()), "{rest}");
}

#[test]
fn test_inspect_and_export_read_urls() {
    let facts = sample_facts();
    put("tools/sample.tsfile", sample_bytes());
    let multi = std::fs::read(root().join("tests/data/corpus/files/table_multi_tables.tsfile")).unwrap();
    put("tools/multi.tsfile", multi);
    let env = aws_env();
    // inspect: the same document as for the local file, but for the name.
    let local = root().join("data/sample.tsfile");
    let (ok, want, err) = tsfile_env(&["inspect", "--json", local.to_str().unwrap()], &[]);
    assert!(ok, "{err}");
    let mut want: serde_json::Value = serde_json::from_str(&want).unwrap();
    for url in ["s3://iot/tools/sample.tsfile".to_string(), format!("{}/sample.tsfile", servers().http)] {
        let (ok, out, err) = tsfile_env(&["inspect", "--json", &url], &env);
        assert!(ok, "{url}: {err}");
        let got: serde_json::Value = serde_json::from_str(&out).unwrap();
        want["file"] = serde_json::json!(url);
        assert_eq!(got, want, "{url}");
    }
    let (ok, out, err) = tsfile_env(&["inspect", "--scan", "s3://iot/tools/sample.tsfile"], &env);
    assert!(ok && out.contains("data section complete"), "{out}{err}");
    let (ok, _, err) = tsfile_env(&["inspect", "s3://iot/tools/missing.tsfile"], &env);
    assert!(!ok && err.starts_with("error: s3://iot/tools/missing.tsfile") && err.lines().count() == 1, "{err}");

    // export: a directory of the bucket, one Parquet file per table of each file.
    let dir = scratch("export-s3");
    let outdir = dir.join("out");
    let (ok, stdout, err) = tsfile_env(&["export", "s3://iot/tools/", "--to", outdir.to_str().unwrap()], &env);
    assert!(ok, "{err}");
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    assert!(stdout.contains("exported 273 rows (table events)"), "{stdout}");
    let parquet = outdir.join("sample.parquet");
    let q = |from: &str| format!("SELECT count(*) AS n, sum(energy_wh) AS e, count(humidity) AS h, max(time) AS t FROM {from}");
    let from_parquet = sql_rows(&[&q(&format!("'{}'", parquet.display()))]);
    assert_eq!(from_parquet, sql_rows(&[&q("'data/sample.tsfile'")]));
    assert_eq!(from_parquet[0]["n"], facts["row_count"]);
    // One output from an HTTP file, filtered.
    let out = dir.join("north.parquet");
    let url = format!("{}/sample.tsfile", servers().http);
    let (ok, stdout, err) = tsfile_env(&["export", &url, "--to", out.to_str().unwrap(), "--where", "region = 'north'"], &[]);
    assert!(ok, "{err}");
    assert!(
        stdout.starts_with(&format!("exported {} rows", fmt_thousands(facts["rows_per_region"]["north"].as_u64().unwrap()))),
        "{stdout}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// `1234567` as `1,234,567` (the export summary's count).
fn fmt_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn test_wrong_credentials_are_one_line_errors_naming_the_url() {
    let s = servers();
    let (key, secret) = (s.auth_key.0.as_str(), s.auth_key.1.as_str());
    put_in(&s.auth_s3, "locked", (key, secret), "fleet/a.tsfile", sample_bytes());
    let ddl = |key: &str, secret: &str| {
        format!(
            "CREATE EXTERNAL TABLE w STORED AS TSFILE LOCATION 's3://locked/fleet/' OPTIONS ('aws.access_key_id' '{key}', \
             'aws.secret_access_key' '{secret}', 'aws.region' 'us-east-1', 'aws.endpoint' '{}', 'aws.allow_http' 'true')",
            s.auth_s3
        )
    };
    // The server's own user reads.
    let rows = sql_rows_env(&[&ddl(key, secret), "SELECT count(*) AS n FROM w"], &[]);
    assert_eq!(rows[0]["n"], sample_facts()["row_count"]);
    // A wrong secret, an unknown key: refused by the server, a clear error, no panic.
    for (k, sec, code) in
        [(key, "WRONG-SECRET-0000", "SignatureDoesNotMatch"), ("AKIANOSUCHUSER00000", secret, "InvalidAccessKeyId")]
    {
        let (ok, _, err) = tsfile_env(&["sql", "-q", "-c", &ddl(k, sec), "-c", "SELECT count(*) FROM w"], &[]);
        assert!(!ok, "{k}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {err}");
        // datafusion-cli checks the bucket while creating the table (as for Parquet): its
        // error names the bucket, not the server's reason ({code}).
        assert!(err.contains("bucket 'locked'") || err.contains("s3://locked/fleet/"), "names the location ({code}): {err}");
        assert!(!err.contains(sec) && !err.contains("panicked"), "{err}");
    }
    // Environment credentials that the server refuses: the same for tsfile_metadata.
    let mut env = vec![
        ("AWS_ACCESS_KEY_ID", key),
        ("AWS_SECRET_ACCESS_KEY", "WRONG-SECRET-1111"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    env.push(("AWS_ENDPOINT", s.auth_s3.as_str()));
    let (ok, _, err) =
        tsfile_env(&["sql", "-q", "-c", "SELECT count(*) FROM tsfile_metadata('s3://locked/fleet/a.tsfile')"], &env);
    assert!(!ok && err.lines().filter(|l| !l.trim().is_empty()).count() == 1, "{err}");
    assert!(err.contains("locked/fleet/a.tsfile") && !err.contains("WRONG-SECRET-1111"), "{err}");
}
