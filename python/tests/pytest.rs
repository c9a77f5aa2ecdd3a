//! Runs the Python package's pytest suite (`python/ci.sh`: build the wheel, install it in a
//! fresh venv with datafusion-python 55, pyarrow, pandas and polars, run `python/tests`),
//! so `cargo test --workspace` covers the Python package too.
#![allow(clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

#[test]
fn pytest_suite_passes_against_the_built_wheel() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(here.join("ci.sh"));
    // The `tsfile` binary of this build (the SQL tests compare with it): cargo builds every
    // workspace binary before it runs tests, next to this test's own directory.
    if let Some(bin_dir) = std::env::current_exe().ok().and_then(|exe| exe.parent()?.parent().map(PathBuf::from)) {
        let tsfile = bin_dir.join("tsfile");
        if tsfile.exists() {
            cmd.env("TSFILE_BIN", tsfile);
        }
    }
    let status = cmd.status();
    match status {
        Ok(s) => assert!(s.success(), "python/ci.sh failed ({s}): see the pytest output above"),
        Err(e) => panic!("cannot run python/ci.sh: {e}"),
    }
}
