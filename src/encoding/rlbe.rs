//! RLBE decoder (stub: being implemented).
#![allow(unused_variables, unused_imports, missing_docs)]

use arrow_buffer::BooleanBufferBuilder;
use crate::encoding::{BinaryValues, SprintzProduct};
use crate::error::{Result, TsFileError};

pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    Err(TsFileError::unsupported("rlbe decoder not implemented yet"))
}

pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    Err(TsFileError::unsupported("rlbe decoder not implemented yet"))
}

pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    Err(TsFileError::unsupported("rlbe decoder not implemented yet"))
}

pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    Err(TsFileError::unsupported("rlbe decoder not implemented yet"))
}
