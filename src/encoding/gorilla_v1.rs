//! GORILLA_V1 decoder (stub: being implemented).
#![allow(unused_variables, unused_imports, missing_docs)]

use arrow_buffer::BooleanBufferBuilder;
use crate::encoding::{BinaryValues, SprintzProduct};
use crate::error::{Result, TsFileError};

pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    Err(TsFileError::unsupported("gorilla_v1 decoder not implemented yet"))
}

pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    Err(TsFileError::unsupported("gorilla_v1 decoder not implemented yet"))
}
