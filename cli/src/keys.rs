//! Keys for encrypted TsFiles on the command line: `--master-key KEY` or the
//! `TSFILE_MASTER_KEY` environment variable (the flag wins). The variable is the better
//! choice: command lines are visible to other users in process lists and shell history.
//! Key values are never printed.

/// The environment variable holding the key.
pub const ENV: &str = "TSFILE_MASTER_KEY";

/// The key from the flag, else from the environment; an empty variable counts as unset.
pub fn master_key(flag: Option<&str>) -> Option<String> {
    flag.map(str::to_string).or_else(|| std::env::var(ENV).ok().filter(|v| !v.is_empty()))
}
