//! The `tsfile` command-line tool.
fn main() {}
