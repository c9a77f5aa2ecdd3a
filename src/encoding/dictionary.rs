//! DICTIONARY decoder (stub: being implemented).
#![allow(unused_variables, unused_imports, missing_docs)]

use arrow_buffer::BooleanBufferBuilder;
use crate::encoding::{BinaryValues, SprintzProduct};
use crate::error::{Result, TsFileError};

pub fn decode_binary(data: &[u8], count: usize, out: &mut BinaryValues) -> Result<()> {
    Err(TsFileError::unsupported("dictionary decoder not implemented yet"))
}
