//! DICTIONARY (encoding id 1) for TEXT and STRING: a per-page dictionary plus RLE indices.
//!
//! ```text
//! VarInt  entry_count
//! entry_count × (VarInt len, len bytes)     entries in first-appearance order
//! RLE stream of INT32 indices (id 2)        one 0-based index per value, to the end
//! ```
//!
//! Every page carries its own dictionary. The C++ writer emits only bit-packed index runs,
//! Java also repeated runs. Entries may contain any bytes, NUL included.

use crate::encoding::corrupt;
use crate::encoding::plain::read_varint;
use crate::encoding::{check_string_len, page_bytes_exceeded, rle, BinaryValues, DecodeOptions};
use crate::error::{Result, TsFileError};

const WHAT: &str = "DICTIONARY stream";

/// Decode `count` TEXT/STRING values with the default limits.
#[cfg(any(test, feature = "experimental"))]
pub fn decode_binary(data: &[u8], count: usize, out: &mut BinaryValues) -> Result<()> {
    decode_binary_with(data, count, out, &DecodeOptions::default())
}

/// Decode `count` TEXT/STRING values. Each entry must fit `opts.max_string_bytes`, the
/// entries together `opts.max_dictionary_bytes`, and the expanded values (which can be far
/// larger than the page: one entry may be repeated `count` times) `opts.max_page_bytes`;
/// all three are checked before the output is allocated.
pub fn decode_binary_with(data: &[u8], count: usize, out: &mut BinaryValues, opts: &DecodeOptions) -> Result<()> {
    if data.is_empty() && count == 0 {
        return Ok(());
    }
    let (n, mut pos) = read_varint(data, 0).map_err(|e| corrupt(WHAT, format!("entry count at byte 0: {e}")))?;
    let Ok(n) = usize::try_from(n) else {
        return Err(corrupt(WHAT, format!("at byte 0: negative entry count {n}")));
    };
    // Every entry takes at least one byte.
    let mut entries: Vec<&[u8]> = Vec::with_capacity(n.min(data.len()));
    let mut dict_bytes = 0usize;
    for i in 0..n {
        let (len, start) =
            read_varint(data, pos).map_err(|e| corrupt(WHAT, format!("length of entry {i} at byte {pos}: {e}")))?;
        let Ok(len) = usize::try_from(len) else {
            return Err(corrupt(WHAT, format!("entry {i} at byte {pos}: negative length {len}")));
        };
        let Some(bytes) = start.checked_add(len).and_then(|end| data.get(start..end)) else {
            return Err(corrupt(
                WHAT,
                format!("entry {i} at byte {pos}: length {len} exceeds the {} remaining bytes", data.len() - start),
            ));
        };
        check_string_len(len, opts, "dictionary entry")?;
        dict_bytes = dict_bytes.saturating_add(len);
        if dict_bytes > opts.max_dictionary_bytes {
            return Err(TsFileError::LimitExceeded {
                what: "bytes of one page's dictionary entries (option max_dictionary_bytes)".into(),
                value: dict_bytes as u64,
                limit: opts.max_dictionary_bytes as u64,
            });
        }
        entries.push(bytes);
        pos = start + len;
    }
    let mut indices = Vec::new();
    rle::decode_i32_at(data, pos, count, &mut indices, WHAT)?;

    // Validate every index and size the output exactly before copying.
    let mut total = 0usize;
    for (j, &ix) in indices.iter().enumerate() {
        let Some(e) = entries.get(ix as u32 as usize) else {
            return Err(corrupt(
                WHAT,
                format!("value {j}: index {ix} out of range for {n} dictionary entries (indices start at byte {pos})"),
            ));
        };
        total = total.saturating_add(e.len());
    }
    let page_bytes = total.saturating_add(indices.len().saturating_mul(4));
    if page_bytes > opts.max_page_bytes {
        return Err(page_bytes_exceeded("bytes of the values of one DICTIONARY page".into(), page_bytes, opts));
    }
    let end = out.data.len().saturating_add(total);
    if end > i32::MAX as usize {
        return Err(TsFileError::LimitExceeded {
            what: "bytes of string values in one array".into(),
            value: end as u64,
            limit: i32::MAX as u64,
        });
    }
    out.data.reserve(total);
    out.offsets.reserve(indices.len());
    for &ix in &indices {
        if let Some(e) = entries.get(ix as u32 as usize) {
            out.data.extend_from_slice(e);
            // why: bounded by the `i32::MAX` check of `end` above, so the offset fits.
            #[allow(clippy::cast_possible_truncation)]
            let offset = out.data.len() as i32;
            out.offsets.push(offset);
        }
    }
    Ok(())
}

/// Test-only DICTIONARY encoder (feature `test-util`).
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::plain::encode::varint;
    use crate::encoding::rle;

    /// Dictionary in first-appearance order, then one RLE index section: Java style
    /// (repeated runs) when `java` is true, C++ style (bit-packed only) otherwise.
    pub fn binary<B: AsRef<[u8]>>(values: &[B], java: bool) -> Vec<u8> {
        let mut entries: Vec<&[u8]> = Vec::new();
        let indices: Vec<i32> = values
            .iter()
            .map(|v| {
                let v = v.as_ref();
                match entries.iter().position(|e| *e == v) {
                    Some(i) => i as i32,
                    None => {
                        entries.push(v);
                        entries.len() as i32 - 1
                    }
                }
            })
            .collect();
        let mut out = Vec::new();
        varint(entries.len() as i32, &mut out);
        for e in &entries {
            varint(e.len() as i32, &mut out);
            out.extend_from_slice(e);
        }
        out.extend(if java { rle::encode::i32(&indices) } else { rle::encode::i32_packed(&indices) });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn strs(data: &[u8], count: usize) -> Result<Vec<Vec<u8>>> {
        let mut v = BinaryValues::new();
        decode_binary(data, count, &mut v)?;
        assert_eq!(v.len(), count);
        Ok(v.iter().map(<[u8]>::to_vec).collect())
    }

    fn owned(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn detail(e: &TsFileError) -> String {
        match e {
            TsFileError::Corrupt { what, detail, .. } => format!("{what}: {detail}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn test_decode_binary_spec_example() {
        let bytes = h("04 02 78 04 79 79 04 01 03 03 40");
        assert_eq!(strs(&bytes, 3).unwrap(), owned(&["x", "yy", "x"]));
        assert_eq!(encode::binary(&["x", "yy", "x"], false), bytes);
    }

    #[test]
    fn test_decode_binary_cpp_writer_page() {
        // A STRING page of the C++ writer (PyPI `tsfile` 2.5), 40 values.
        let bytes = h("0e06616221000678797a04616202710878797a2104712112030b080538ca7194e335c6538ca7194f329c");
        let want: Vec<&str> = (0..40)
            .map(|i| match (i % 5, i) {
                (0, 0) => "ab!",
                (2, 17) => "xyz!",
                (4, 34) => "q!",
                (0, _) | (3, _) => "ab",
                (1, _) => "",
                (2, _) => "xyz",
                _ => "q",
            })
            .collect();
        assert_eq!(strs(&bytes, 40).unwrap(), owned(&want));
        assert_eq!(encode::binary(&want, false), bytes);
    }

    #[test]
    fn test_decode_binary_zero_and_one_value() {
        assert!(strs(&[], 0).unwrap().is_empty());
        // An empty dictionary with an empty index stream.
        assert!(strs(&h("00"), 0).unwrap().is_empty());
        assert_eq!(strs(&encode::binary(&["only"], false), 1).unwrap(), owned(&["only"]));
        assert_eq!(strs(&encode::binary(&[""], true), 1).unwrap(), owned(&[""]));
        assert!(strs(&[], 1).is_err());
    }

    #[test]
    fn test_decode_binary_java_repeated_index_runs_and_nul_bytes() {
        let vals: Vec<&[u8]> = [vec![&b"a\0b"[..]; 20], vec![&b""[..], b"\xff\xfe", b"a\0b"], vec![&b"z"[..]; 9]].concat();
        let bytes = encode::binary(&vals, true);
        let got = strs(&bytes, vals.len()).unwrap();
        assert_eq!(got, vals.iter().map(|v| v.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn test_decode_binary_index_out_of_range_is_error() {
        // Two entries, indices [0, 2] (width 2).
        let e = strs(&h("04 02 78 04 79 79 05 02 03 02 20 00"), 2).unwrap_err();
        assert!(detail(&e).contains("index 2 out of range for 2"), "{}", detail(&e));
        // A negative index from a 32-bit repeated run.
        let e = strs(&h("02 02 78 06 20 10 ff ff ff ff"), 8).unwrap_err();
        assert!(detail(&e).contains("index -1 out of range"), "{}", detail(&e));
        // No entries at all.
        assert!(strs(&h("00 03 01 03 01 00"), 1).is_err());
    }

    #[test]
    fn test_decode_binary_bad_entries_are_errors() {
        assert!(detail(&strs(&h("01"), 0).unwrap_err()).contains("negative entry count -1"));
        assert!(detail(&strs(&h("02 03 78"), 0).unwrap_err()).contains("negative length"));
        assert!(detail(&strs(&h("02 08 78"), 0).unwrap_err()).contains("exceeds"));
        assert!(strs(&h("ff ff ff ff 07"), 0).is_err());
    }

    #[test]
    fn test_decode_binary_count_mismatch_is_error() {
        let bytes = encode::binary(&["a", "b", "a", "c"], false);
        assert!(strs(&bytes, 3).is_err());
        assert!(strs(&bytes, 5).is_err());
        let e = strs(&bytes, 1 << 40).unwrap_err();
        assert!(detail(&e).contains("of 1099511627776"), "{}", detail(&e));
    }

    #[test]
    fn test_decode_binary_truncated_at_every_byte_is_error() {
        let vals = ["alpha", "", "beta", "alpha", "gamma", "", "beta"];
        let bytes = encode::binary(&vals, true);
        for cut in 0..bytes.len() {
            assert!(strs(&bytes[..cut], vals.len()).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn test_decode_binary_appends_after_existing_values() {
        let mut v = BinaryValues::new();
        v.push(b"pre").unwrap();
        decode_binary(&encode::binary(&["x", "yy", "x"], false), 3, &mut v).unwrap();
        assert_eq!(v.offsets, vec![0, 3, 4, 6, 7]);
        assert_eq!(v.data, b"prexyyx");
    }

    proptest! {
        #[test]
        fn test_decode_binary_round_trip(
            picks in proptest::collection::vec(0usize..6, 0..300),
            dict in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 6),
            java in any::<bool>()
        ) {
            let vals: Vec<&[u8]> = picks.iter().map(|&i| dict[i].as_slice()).collect();
            let got = strs(&encode::binary(&vals, java), vals.len()).unwrap();
            prop_assert_eq!(got, vals.iter().map(|v| v.to_vec()).collect::<Vec<_>>());
        }

        #[test]
        fn test_decode_binary_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..80), count in 0usize..100
        ) {
            let mut v = BinaryValues::new();
            let _ = decode_binary(&data, count, &mut v);
        }
    }
}
