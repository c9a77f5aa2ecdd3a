//! The one integration-test binary (one link step instead of one per file).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod conformance;
mod corpus_structure;
mod malformed;
mod sample;
mod sql;
mod truncation;
