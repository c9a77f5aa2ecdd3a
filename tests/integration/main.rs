//! The one integration-test binary (one link step instead of one per file).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod alloc;
mod common;
mod concurrency;
mod conformance;
mod corpus_structure;
mod corrupt;
mod encryption;
mod limits;
mod malformed;
mod sample;
mod sql;
mod sql_tree;
mod sweep;
mod truncation;
mod writer;
