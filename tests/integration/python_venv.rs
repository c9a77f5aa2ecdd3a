//! Python venvs for the tests that run real Python programs (the official C++ writer from
//! PyPI, the object-store servers): created on first use from a requirements file, reused
//! while they hold exactly those requirements (a copy of the file is kept in the venv as
//! the stamp). Shared by the integration tests and, through `#[path]`, by the CLI's and the
//! Ballista crate's server harness; it needs only the standard library.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Run `cmd`, panicking with its output when it fails.
pub fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The interpreter of the venv at `venv`, created (with `$PYTHON`, default `python3`) and
/// filled from `requirements` unless it already holds exactly these requirements.
pub fn ensure_venv(venv: &Path, requirements: &Path) -> PathBuf {
    let wanted = std::fs::read_to_string(requirements).unwrap_or_else(|e| panic!("{}: {e}", requirements.display()));
    let stamp = venv.join("requirements.installed");
    let python = venv.join("bin/python");
    if python.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return python;
    }
    let system_python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    run(Command::new(&system_python).args(["-m", "venv"]).arg(venv), &format!("creating the venv {}", venv.display()));
    run(
        Command::new(&python).args(["-m", "pip", "install", "-q", "-r"]).arg(requirements),
        &format!("installing {}", requirements.display()),
    );
    std::fs::write(&stamp, wanted).unwrap_or_else(|e| panic!("{}: {e}", stamp.display()));
    python
}
