//! The real servers the object-store tests run against, started once per test process:
//! `tools/test-servers/serve.py` (moto's S3 API and a Range-aware HTTP server) on 127.0.0.1,
//! from a Python venv it creates on first use (`target/test-venv`, or `TSFILE_TEST_VENV`).
//! The server exits when this process does (it serves until its standard input closes).
//! Shared by the CLI's tests and the Ballista cluster test (`#[path]`): it needs only
//! `serde_json` and a crate one directory below the workspace root; the venv comes from
//! the integration tests' `python_venv` helper.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

#[path = "../../../tests/integration/python_venv.rs"]
#[allow(dead_code)] // `run` is the integration tests'
mod python_venv;

/// The workspace root (every crate using this file sits one level below it).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The running servers' base URLs.
pub struct Servers {
    /// moto's S3 endpoint (`http://127.0.0.1:port`); bucket `iot` exists.
    pub s3: String,
    /// The HTTP server over `data/` (`http://127.0.0.1:port`).
    pub http: String,
    /// A second moto S3 endpoint that checks signatures; bucket `locked` exists.
    pub auth_s3: String,
    /// The access key id and secret of its one user (allowed `s3:*`).
    pub auth_key: (String, String),
    /// Held so its standard input stays open while this process lives.
    _child: Mutex<Child>,
}

/// The servers, started on first use.
pub fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(start)
}

fn venv() -> PathBuf {
    std::env::var_os("TSFILE_TEST_VENV").map(PathBuf::from).unwrap_or_else(|| root().join("target/test-venv"))
}

fn ensure_venv(venv: &Path) -> PathBuf {
    python_venv::ensure_venv(venv, &root().join("tools/test-servers/requirements.txt"))
}

fn start() -> Servers {
    let python = ensure_venv(&venv());
    let mut child = Command::new(python)
        .arg(root().join("tools/test-servers/serve.py"))
        .arg("--http-root")
        .arg(root().join("data"))
        .args(["--bucket", "iot", "--auth-bucket", "locked"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start tools/test-servers/serve.py: {e}"));
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let urls: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("serve.py did not start ({e}): {line:?}"));
    let text = |k: &str| urls[k].as_str().unwrap_or_else(|| panic!("serve.py: no '{k}' in {line:?}")).to_string();
    Servers {
        s3: text("s3"),
        http: text("http"),
        auth_s3: text("auth_s3"),
        auth_key: (text("auth_key"), text("auth_secret")),
        _child: Mutex::new(child),
    }
}
