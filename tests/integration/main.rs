//! The one integration-test binary (one link step instead of one per file).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod alloc;
mod common;
mod concurrency;
mod conformance;
mod corpus_structure;
mod corrupt;
mod cross_writer;
mod encryption;
mod epoch_literals;
mod export;
mod fleet;
mod float_pruning;
mod iotdb_dir;
mod java;
mod java_encodings;
mod layering;
mod limits;
mod malformed;
// Plan serialization: the `proto` feature (on in workspace builds through the `distributed` member).
#[cfg(feature = "proto")]
mod proto;
mod pushdown;
mod python_venv;
mod sample;
mod sql;
mod sql_tree;
mod stats_aggregates;
mod stats_answers;
mod sweep;
mod tampered_stats;
mod truncation;
mod v3;
mod wide;
mod write_roundtrip;
mod write_sql;
mod writer;
mod writer_decision;
mod writer_v3;
