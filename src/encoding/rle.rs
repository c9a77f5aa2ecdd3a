//! RLE (encoding id 2): the RLE/bit-packing hybrid.
//!
//! A stream is one or more *sections* until its end (writers emit one per page):
//!
//! ```text
//! UVarInt section_len   bytes that follow, including the width byte
//! u8      w             bit width: at most 32 (INT32) / 64 (INT64)
//! runs until the section is used up:
//!   UVarInt h
//!   h odd:  bit-packed run: g = h >> 1 groups (≥ 1), u8 k = valid values in the last group
//!           (1..=8), then BP(w, 8g) in g·w bytes; the run holds (g − 1)·8 + k values
//!   h even: repeated run of h >> 1 copies of one value stored in ceil(w/8) bytes:
//!           little-endian for INT32, big-endian for INT64 (what the Java writer does)
//! ```
//!
//! Unpacked fields are raw bit patterns reinterpreted as `i32`/`i64`. BOOLEAN (Java only) is
//! INT32 RLE of 0/1; FLOAT/DOUBLE (Java only) put the scaled-integer
//! [`float_wrapper`](crate::encoding::float_wrapper) in front of INT32/INT64 sections.

use arrow_buffer::BooleanBufferBuilder;

use crate::encoding::bits::{self, PackedInt};
use crate::encoding::corrupt;
use crate::encoding::plain::read_uvarint;
use crate::encoding::float_wrapper::{FloatWrapper, ScaledFloat};
use crate::error::Result;

/// Values unpacked per call into the scratch buffer (eight groups).
const CHUNK: usize = 64;

/// Integer lanes of RLE: how a repeated run stores its value.
pub(crate) trait RleInt: PackedInt {
    /// The value of a repeated run from its `ceil(w/8)` bytes.
    fn repeated(bytes: &[u8]) -> Self;
}

impl RleInt for i32 {
    /// Little-endian.
    #[inline]
    fn repeated(bytes: &[u8]) -> i32 {
        bytes.iter().rev().fold(0u32, |v, &b| (v << 8) | u32::from(b)) as i32
    }
}

impl RleInt for i64 {
    /// Big-endian (Java's "little endian" long helper writes big-endian).
    #[inline]
    fn repeated(bytes: &[u8]) -> i64 {
        bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b)) as i64
    }
}

/// Decode exactly `count` values from the sections in `data[start..]`, passing each through
/// `map` into `out`.
#[inline(always)]
fn decode_sections<T: RleInt, O, F: FnMut(T) -> O>(
    data: &[u8],
    start: usize,
    count: usize,
    out: &mut Vec<O>,
    what: &str,
    mut map: F,
) -> Result<()> {
    // Bit-packed runs hold at most 8 values per byte for w >= 1; longer repeated runs grow
    // the vector as they are decoded (each checked against `count` first).
    out.reserve(count.min(data.len().saturating_sub(start).saturating_mul(8)));
    let mut stream = Stream { data, count, produced: 0, what, scratch: [0u64; CHUNK] };
    let mut pos = start;
    while pos < data.len() {
        let section = stream.section::<T>(pos)?;
        let mut q = section.runs;
        while q < section.end {
            q = stream.run(&section, q, out, &mut map)?;
        }
        pos = section.end;
    }
    if stream.produced != count {
        return Err(corrupt(what, format!("at byte {}: stream ends after {} of {count} values", data.len(), stream.produced)));
    }
    Ok(())
}

/// An RLE stream being decoded: `produced` of its `count` values so far; errors name `what`
/// and positions in `data`.
struct Stream<'d, 'w> {
    data: &'d [u8],
    count: usize,
    produced: usize,
    what: &'w str,
    scratch: [u64; CHUNK],
}

/// One section of a stream: where it ends, its bit width and where its first run starts.
struct Section {
    end: usize,
    width: u32,
    runs: usize,
}

impl Stream<'_, '_> {
    /// Parse the section header at `pos`: its length (within the stream) and bit width.
    #[inline(always)]
    fn section<T: RleInt>(&self, pos: usize) -> Result<Section> {
        let (data, what) = (self.data, self.what);
        let (len, p) = read_uvarint(data, pos).map_err(|e| corrupt(what, format!("section length at byte {pos}: {e}")))?;
        let end = p
            .checked_add(len as usize)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| corrupt(what, format!("section at byte {pos} declares {len} bytes, {} remain", data.len() - p)))?;
        let Some(&w) = data.get(..end).and_then(|sec| sec.get(p)) else {
            return Err(corrupt(what, format!("section at byte {pos} is empty (no bit width)")));
        };
        let width = u32::from(w);
        if width > T::BITS {
            return Err(corrupt(what, format!("section at byte {pos}: bit width {width} exceeds {} for {}", T::BITS, T::NAME)));
        }
        Ok(Section { end, width, runs: p + 1 })
    }

    /// Decode the run whose header is at `run` into `out`; returns where the next run starts.
    #[inline(always)]
    fn run<T: RleInt, O, F: FnMut(T) -> O>(&mut self, section: &Section, run: usize, out: &mut Vec<O>, map: &mut F) -> Result<usize> {
        let sec = self.data.get(..section.end).unwrap_or(&[]);
        let (h, q) = read_uvarint(sec, run).map_err(|e| corrupt(self.what, format!("run header at byte {run}: {e}")))?;
        if h & 1 == 1 {
            self.bit_packed_run(section, run, q, (h >> 1) as usize, out, map)
        } else {
            self.repeated_run(section, run, q, (h >> 1) as usize, out, map)
        }
    }

    /// A bit-packed run of `groups` groups of 8 values whose header is at `run`, its body
    /// (after the header) at `q`.
    #[inline(always)]
    fn bit_packed_run<T: RleInt, O, F: FnMut(T) -> O>(
        &mut self,
        section: &Section,
        run: usize,
        mut q: usize,
        groups: usize,
        out: &mut Vec<O>,
        map: &mut F,
    ) -> Result<usize> {
        let (data, what, count, w, sec_end) = (self.data, self.what, self.count, section.width, section.end);
        if groups == 0 {
            return Err(corrupt(what, format!("bit-packed run at byte {run} has 0 groups")));
        }
        let Some(&k) = data.get(..sec_end).and_then(|sec| sec.get(q)) else {
            return Err(corrupt(what, format!("bit-packed run at byte {run}: truncated")));
        };
        if !(1..=8).contains(&k) {
            return Err(corrupt(what, format!("bit-packed run at byte {run}: {k} valid values in the last group")));
        }
        q += 1;
        let values = (groups - 1).saturating_mul(8).saturating_add(usize::from(k));
        let nbytes = groups.saturating_mul(w as usize);
        // The run's groups; unpacking may look at the bytes after them (never beyond the
        // stream), which keeps the word loads on the fast path.
        let Some(body) = q.checked_add(nbytes).filter(|&e| e <= sec_end).and_then(|_| data.get(q..)) else {
            return Err(corrupt(
                what,
                format!(
                    "bit-packed run at byte {run}: {groups} groups of width {w} need {nbytes} bytes, {} remain in the section",
                    sec_end - q
                ),
            ));
        };
        if values > count - self.produced {
            return Err(corrupt(
                what,
                format!("bit-packed run at byte {run} holds {values} values but only {} of {count} remain", count - self.produced),
            ));
        }
        let mut done = 0usize;
        while done < values {
            let m = CHUNK.min(values - done);
            let src = body.get(done / 8 * w as usize..).unwrap_or(&[]);
            // why: m <= CHUNK = scratch.len() (the min above); hot loop, keeps its shape.
            #[allow(clippy::indexing_slicing)]
            let lane = &mut self.scratch[..m];
            bits::unpack(w, src, lane)?;
            out.extend(lane.iter().map(|&r| map(T::from_u64(r))));
            done += m;
        }
        self.produced += values;
        Ok(q + nbytes)
    }

    /// A repeated run of `n` copies whose header is at `run`, its value at `q`.
    #[inline(always)]
    fn repeated_run<T: RleInt, O, F: FnMut(T) -> O>(
        &mut self,
        section: &Section,
        run: usize,
        q: usize,
        n: usize,
        out: &mut Vec<O>,
        map: &mut F,
    ) -> Result<usize> {
        let (what, count) = (self.what, self.count);
        let value_bytes = section.width.div_ceil(8) as usize;
        let Some(vb) = self.data.get(..section.end).and_then(|sec| sec.get(q..q + value_bytes)) else {
            return Err(corrupt(what, format!("repeated run at byte {run}: value of {value_bytes} bytes truncated")));
        };
        if n > count - self.produced {
            return Err(corrupt(
                what,
                format!("repeated run at byte {run} holds {n} values but only {} of {count} remain", count - self.produced),
            ));
        }
        let v = T::repeated(vb);
        out.extend((0..n).map(|_| map(v)));
        self.produced += n;
        Ok(q + value_bytes)
    }
}

/// Decode `count` INT32 values from the RLE sections in `data[start..]`; errors name `what`
/// and positions in `data`. Used by DICTIONARY for its index stream.
pub(crate) fn decode_i32_at(data: &[u8], start: usize, count: usize, out: &mut Vec<i32>, what: &str) -> Result<()> {
    decode_sections::<i32, i32, _>(data, start, count, out, what, |x| x)
}

/// Decode `count` BOOLEAN values (Java: INT32 RLE of 0/1; any non-zero value is true).
pub fn decode_bool(data: &[u8], count: usize, out: &mut BooleanBufferBuilder) -> Result<()> {
    let mut ints = Vec::new();
    decode_sections::<i32, i32, _>(data, 0, count, &mut ints, "RLE BOOLEAN stream", |x| x)?;
    out.reserve(count);
    for chunk in ints.chunks(64) {
        let mut word = 0u64;
        for (i, &v) in chunk.iter().enumerate() {
            word |= u64::from(v != 0) << i;
        }
        out.append_word(word, chunk.len());
    }
    Ok(())
}

/// Decode `count` INT32/DATE values.
pub fn decode_i32(data: &[u8], count: usize, out: &mut Vec<i32>) -> Result<()> {
    decode_sections::<i32, i32, _>(data, 0, count, out, "RLE INT32 stream", |x| x)
}

/// Decode `count` INT64/TIMESTAMP values.
pub fn decode_i64(data: &[u8], count: usize, out: &mut Vec<i64>) -> Result<()> {
    decode_sections::<i64, i64, _>(data, 0, count, out, "RLE INT64 stream", |x| x)
}

/// Decode `count` FLOAT values (Java: float wrapper + INT32 sections).
pub fn decode_f32(data: &[u8], count: usize, out: &mut Vec<f32>) -> Result<()> {
    decode_float(data, count, out, "RLE FLOAT stream")
}

/// Decode `count` DOUBLE values (Java: float wrapper + INT64 sections).
pub fn decode_f64(data: &[u8], count: usize, out: &mut Vec<f64>) -> Result<()> {
    decode_float(data, count, out, "RLE DOUBLE stream")
}

fn decode_float<F>(data: &[u8], count: usize, out: &mut Vec<F>, what: &str) -> Result<()>
where
    F: ScaledFloat,
    F::Int: RleInt,
{
    if data.is_empty() && count == 0 {
        return Ok(());
    }
    let (wrapper, start) = FloatWrapper::parse(data, count, what)?;
    if wrapper.is_form1() {
        let scale = wrapper.scale;
        decode_sections::<F::Int, F, _>(data, start, count, out, what, |x| F::scaled(x, scale))
    } else {
        let mut p = 0usize;
        decode_sections::<F::Int, F, _>(data, start, count, out, what, |x| {
            let v = wrapper.value(p, x);
            p += 1;
            v
        })
    }
}

/// Test-only RLE encoders (feature `test-util`): one section per call.
#[cfg(any(test, feature = "test-util"))]
pub mod encode {
    // why: a test-only encoder (feature `test-util`, for tests and benches) that never reads file data.
    #![allow(clippy::cast_possible_truncation, clippy::indexing_slicing)]
    use crate::encoding::bits::BitWriter;
    use crate::encoding::plain::encode::uvarint;
    use crate::encoding::float_wrapper::encode::{float_wrapper_f32, float_wrapper_f64};

    /// One RLE section of raw bit patterns `vals` (`int64` selects the INT64 repeated-value
    /// byte order). With `repeated`, runs of at least 8 equal values become repeated runs
    /// (Java); otherwise everything is bit-packed in runs of at most 63 groups (C++).
    pub fn section(vals: &[u64], int64: bool, repeated: bool) -> Vec<u8> {
        let width = vals.iter().map(|v| 64 - v.leading_zeros()).max().unwrap_or(0).max(1);
        let mut body = vec![width as u8];
        let mut pending: Vec<u64> = Vec::new();
        let mut i = 0;
        while i < vals.len() {
            let mut j = i;
            while j < vals.len() && vals[j] == vals[i] {
                j += 1;
            }
            if repeated && j - i >= 8 {
                flush_packed(&mut pending, width, &mut body);
                uvarint(((j - i) as u32) << 1, &mut body);
                let nb = width.div_ceil(8) as usize;
                if int64 {
                    body.extend_from_slice(&vals[i].to_be_bytes()[8 - nb..]);
                } else {
                    body.extend_from_slice(&vals[i].to_le_bytes()[..nb]);
                }
                i = j;
            } else {
                pending.push(vals[i]);
                i += 1;
            }
        }
        flush_packed(&mut pending, width, &mut body);
        let mut out = Vec::new();
        uvarint(body.len() as u32, &mut out);
        out.extend(body);
        out
    }

    fn flush_packed(pending: &mut Vec<u64>, width: u32, body: &mut Vec<u8>) {
        for run in pending.chunks(63 * 8) {
            let groups = run.len().div_ceil(8);
            uvarint(((groups as u32) << 1) | 1, body);
            body.push((run.len() - (groups - 1) * 8) as u8);
            let mut w = BitWriter::new();
            for idx in 0..groups * 8 {
                w.write(run.get(idx).copied().unwrap_or(0), width);
            }
            body.extend(w.finish());
        }
        pending.clear();
    }

    /// INT32, Java style (repeated runs for 8+ equal values).
    pub fn i32(values: &[i32]) -> Vec<u8> {
        section(&values.iter().map(|&v| u64::from(v as u32)).collect::<Vec<_>>(), false, true)
    }

    /// INT32, C++ style (bit-packed runs only).
    pub fn i32_packed(values: &[i32]) -> Vec<u8> {
        section(&values.iter().map(|&v| u64::from(v as u32)).collect::<Vec<_>>(), false, false)
    }

    /// INT64, Java style (repeated runs store the value big-endian).
    pub fn i64(values: &[i64]) -> Vec<u8> {
        section(&values.iter().map(|&v| v as u64).collect::<Vec<_>>(), true, true)
    }

    /// INT64, C++ style (bit-packed runs only).
    pub fn i64_packed(values: &[i64]) -> Vec<u8> {
        section(&values.iter().map(|&v| v as u64).collect::<Vec<_>>(), true, false)
    }

    /// BOOLEAN, Java style: INT32 RLE of 0/1.
    pub fn bool(values: &[bool]) -> Vec<u8> {
        i32(&values.iter().map(|&b| i32::from(b)).collect::<Vec<_>>())
    }

    /// FLOAT, Java style: float wrapper with `mpn` digits, then one INT32 section.
    pub fn f32(values: &[f32], mpn: u32) -> Vec<u8> {
        let (mut out, ints) = float_wrapper_f32(values, mpn);
        out.extend(i32(&ints));
        out
    }

    /// DOUBLE, Java style: float wrapper with `mpn` digits, then one INT64 section.
    pub fn f64(values: &[f64], mpn: u32) -> Vec<u8> {
        let (mut out, ints) = float_wrapper_f64(values, mpn);
        out.extend(i64(&ints));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TsFileError;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn i32s(data: &[u8], count: usize) -> Result<Vec<i32>> {
        let mut v = Vec::new();
        decode_i32(data, count, &mut v).map(|_| v)
    }

    fn i64s(data: &[u8], count: usize) -> Result<Vec<i64>> {
        let mut v = Vec::new();
        decode_i64(data, count, &mut v).map(|_| v)
    }

    fn f32s(data: &[u8], count: usize) -> Result<Vec<f32>> {
        let mut v = Vec::new();
        decode_f32(data, count, &mut v).map(|_| v)
    }

    fn f64s(data: &[u8], count: usize) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        decode_f64(data, count, &mut v).map(|_| v)
    }

    fn bools(data: &[u8], count: usize) -> Result<Vec<bool>> {
        let mut b = BooleanBufferBuilder::new(0);
        decode_bool(data, count, &mut b)?;
        Ok(b.finish().iter().collect())
    }

    fn detail(e: &TsFileError) -> String {
        match e {
            TsFileError::Corrupt { what, detail, .. } => format!("{what}: {detail}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    // ---- worked examples of the spec ----

    #[test]
    fn test_decode_i32_spec_example_cpp_bitpacked() {
        let bytes = h("06 03 03 05 b6 94 00");
        assert_eq!(i32s(&bytes, 5).unwrap(), vec![5, 5, 5, 1, 2]);
        assert_eq!(encode::i32_packed(&[5, 5, 5, 1, 2]), bytes);
        assert_eq!(encode::i32(&[5, 5, 5, 1, 2]), bytes);
    }

    #[test]
    fn test_decode_i32_spec_example_java_repeated_run() {
        let bytes = h("08 03 18 05 03 02 28 00 00");
        let mut want = vec![5; 12];
        want.extend([1, 2]);
        assert_eq!(i32s(&bytes, 14).unwrap(), want);
        assert_eq!(encode::i32(&want), bytes);
    }

    #[test]
    fn test_decode_i64_spec_example_java_repeated_run_w64() {
        // [7] * 20 then -1 (forces w = 64): repeated run `28 | 00..07`, value big-endian.
        let mut want = vec![7i64; 20];
        want.push(-1);
        let mut body = h("40 28 0000000000000007 03 01 ffffffffffffffff");
        body.extend([0u8; 56]);
        let mut bytes = vec![body.len() as u8];
        bytes.extend(&body);
        assert_eq!(i64s(&bytes, 21).unwrap(), want);
        assert_eq!(encode::i64(&want), bytes);
    }

    /// An INT32 page of the C++ writer (PyPI `tsfile` 2.5): `(i * 37) % 1000` for
    /// i in 0..520, width 10, a run of 63 groups then a run of 2 groups.
    const CPP_INT32_PAGE: &str = "8f050a7f08000251286f250b9379034a14d5c9976f1e181a2b94275a6abfb930\
        9cbb53de39df0be7090491b8932e0dd4092753171659bb782058aa4f9d299afae3c232dd4b77e73c1f982312\
        06d248b7371014994b5c1956e9df8122993a73a62bdb8b07cb351ddb9bf03e5088471b0912d8db401255296f\
        651b977a038a24d9ca97af2e1c1b2bd4375e6bbff90211186b240b5368ff491495b9936e1dd80a2793271a5a\
        bbb8305cab4fdd399efbe3080451a88f2d0d93f9235216d649b77720189a4b9c295aeadfc1329d3b73e63bdf\
        881f11069238b3360fd489475b1916d9db8022592a6fa52b9b7b03ca34ddcb97ef3e1078431a08d2c8d73f12\
        15196b641b5769ff892499ba93ae2ddc0b27d3371e5bbbf801d10867230b1358fb481455a98f6d1d97fa2392\
        26da4ab7b7301c9b4bdc395eebdf070411988b2c0d53e91f51169639b3761fd88a479b291adadbc0325d2b6f\
        e53b9f781b10065228af350f9479435a18d6c9d77f22191a6ba42b5b6affc9349dbb93ee3dd0683f190892b8\
        d33e11d50967631b1759fb882459aa8fad2d9bfb23d236de4bb7f70190f863220ad348f7471415998b6c1d57\
        ea1f91269a3ab3b62fdc8b47db391edbdb0603d188872b0d13d91b50165629af751f987a439a28dacad7bf32\
        1d1b6be43b5f68170f061218ab340f54693f591896b9d37e21d90a67a32b1b5afbc8345dab8fed3d90583b18\
        0852a8cf3d1194f963621ad749f78724199a8bac2d5beb1fd1369e3bb3f60150e85f210a9338f34613d58987\
        6b1d17da1b90265a2aafb52f9c7b43da38decbd705039178832a0cd3c9174f161619ab741f586a3f99289aba\
        d3be31dd0b67e33b1f58130e05d208a7330f14593b581856a9cf7d2198fa630508a22adb4af7c7341d9b8bec\
        3d50483717081298cb";

    #[test]
    fn test_decode_i32_cpp_writer_page_two_runs() {
        let want: Vec<i32> = (0..520).map(|i| (i * 37) % 1000).collect();
        let bytes = h(CPP_INT32_PAGE);
        assert_eq!(i32s(&bytes, 520).unwrap(), want);
        assert_eq!(encode::i32_packed(&want), bytes);
    }

    /// An INT64 page of the C++ writer: `i * 1000003` for i in 0..20 except [3] = -5,
    /// width 64, one bit-packed run of 3 groups with 4 valid values in the last.
    const CPP_INT64_PAGE: &str = "c301400704000000000000000000000000000f424300000000001e8486ffffff\
        fffffffffb00000000003d090c00000000004c4b4f00000000005b8d9200000000006acfd500000000007a12\
        18000000000089545b000000000098969e0000000000a7d8e10000000000b71b240000000000c65d67000000\
        0000d59faa0000000000e4e1ed0000000000f424300000000001036673000000000112a8b6000000000121ea\
        f90000000000000000000000000000000000000000000000000000000000000000";

    #[test]
    fn test_decode_i64_cpp_writer_page_w64() {
        let mut want: Vec<i64> = (0..20).map(|i| i * 1_000_003).collect();
        want[3] = -5;
        let bytes = h(CPP_INT64_PAGE);
        assert_eq!(i64s(&bytes, 20).unwrap(), want);
        assert_eq!(encode::i64_packed(&want), bytes);
    }

    // ---- edge cases ----

    #[test]
    fn test_decode_zero_and_one_value() {
        assert!(i32s(&[], 0).unwrap().is_empty());
        assert!(i64s(&[], 0).unwrap().is_empty());
        assert!(f32s(&[], 0).unwrap().is_empty());
        assert!(f64s(&[], 0).unwrap().is_empty());
        assert!(bools(&[], 0).unwrap().is_empty());
        assert_eq!(i32s(&encode::i32(&[-9]), 1).unwrap(), vec![-9]);
        assert_eq!(i64s(&encode::i64(&[i64::MAX]), 1).unwrap(), vec![i64::MAX]);
        assert_eq!(f64s(&encode::f64(&[0.07], 2), 1).unwrap(), vec![0.07]);
        assert!(i32s(&[], 1).is_err());
    }

    #[test]
    fn test_decode_group_multiples() {
        for n in [7usize, 8, 9, 16, 503, 504, 505, 1008, 1009] {
            let vals: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 613 - 300).collect();
            assert_eq!(i32s(&encode::i32_packed(&vals), n).unwrap(), vals, "n {n}");
            let v64: Vec<i64> = vals.iter().map(|&v| i64::from(v) << 20).collect();
            assert_eq!(i64s(&encode::i64_packed(&v64), n).unwrap(), v64, "n {n}");
        }
    }

    #[test]
    fn test_decode_max_widths_and_extremes() {
        let vals = [i32::MIN, i32::MAX, 0, -1, 1, i32::MIN, i32::MIN, i32::MIN, i32::MIN, i32::MIN, i32::MIN, i32::MIN, i32::MIN];
        let bytes = encode::i32(&vals);
        assert_eq!(bytes[1], 32);
        assert_eq!(i32s(&bytes, vals.len()).unwrap(), vals);
        let vals = [i64::MIN, i64::MAX, 0, -1, i64::MAX, i64::MAX, i64::MAX, i64::MAX, i64::MAX, i64::MAX, i64::MAX, i64::MAX];
        let bytes = encode::i64(&vals);
        assert_eq!(bytes[1], 64);
        assert_eq!(i64s(&bytes, vals.len()).unwrap(), vals);
    }

    #[test]
    fn test_decode_repeated_run_byte_orders() {
        // INT32, w = 12: value 0x0abc stored little-endian in 2 bytes.
        let bytes = h("04 0c 10 bc 0a");
        assert_eq!(i32s(&bytes, 8).unwrap(), vec![0x0abc; 8]);
        assert_eq!(encode::i32(&[0x0abc; 8]), bytes);
        // INT64, w = 12: the same value stored big-endian.
        let bytes = h("04 0c 10 0a bc");
        assert_eq!(i64s(&bytes, 8).unwrap(), vec![0x0abc; 8]);
        assert_eq!(encode::i64(&[0x0abc; 8]), bytes);
        // INT32 -1 at w = 32: four bytes ff.
        assert_eq!(i32s(&h("06 20 10 ff ff ff ff"), 8).unwrap(), vec![-1; 8]);
        // INT64, w = 40: five big-endian bytes.
        assert_eq!(i64s(&h("07 28 06 01 02 03 04 05"), 3).unwrap(), vec![0x01_0203_0405; 3]);
        // A long repeated run from three bytes.
        assert_eq!(i32s(&h("05 01 fe ff 03 01"), 32767).unwrap(), vec![1; 32767]);
    }

    #[test]
    fn test_decode_mixed_runs_and_several_sections() {
        let a: Vec<i32> = [vec![3; 20], (0..13).collect(), vec![-2; 9], vec![4]].concat();
        let b: Vec<i32> = (0..70).map(|i| i % 4).collect();
        let mut bytes = encode::i32(&a);
        bytes.extend(encode::i32(&b));
        bytes.extend(encode::i32_packed(&[100, 200]));
        let want: Vec<i32> = [a.clone(), b.clone(), vec![100, 200]].concat();
        assert_eq!(i32s(&bytes, want.len()).unwrap(), want);
        assert!(i32s(&bytes, want.len() - 1).is_err());
        assert!(i32s(&bytes, want.len() + 1).is_err());
        let la: Vec<i64> = [vec![1i64 << 40; 8], vec![-1, 5]].concat();
        let mut lb = encode::i64(&la);
        lb.extend(encode::i64(&la));
        assert_eq!(i64s(&lb, 20).unwrap(), [la.clone(), la].concat());
    }

    #[test]
    fn test_decode_bool_java_form() {
        let vals: Vec<bool> = (0..150).map(|i| (i / 10) % 2 == 0 || i % 7 == 0).collect();
        let bytes = encode::bool(&vals);
        assert_eq!(bytes[1], 1, "width 1");
        assert_eq!(bools(&bytes, vals.len()).unwrap(), vals);
        // A repeated run of 1s (Java emits these for 8+ equal values).
        assert_eq!(bools(&h("03 01 14 01"), 10).unwrap(), vec![true; 10]);
        // Non-zero values other than 1 are true.
        assert_eq!(bools(&h("03 01 10 00"), 8).unwrap(), vec![false; 8]);
        assert_eq!(bools(&encode::i32(&[0, 2, -1]), 3).unwrap(), vec![false, true, true]);
        assert!(bools(&bytes, vals.len() + 1).is_err());
    }

    #[test]
    fn test_decode_f32_java_float_forms() {
        // Form 1 with repeated runs.
        let vals: Vec<f32> = [vec![1.25; 10], vec![-3.5, 0.01, 7.0]].concat();
        let bytes = encode::f32(&vals, 2);
        assert_eq!(bytes[0], 2);
        assert_eq!(f32s(&bytes, vals.len()).unwrap(), vals);
        // Form 3: NaN, infinities and -0.0.
        let vals = [f32::NAN, 1.5, f32::INFINITY, f32::NEG_INFINITY, -0.0, 3e7, f32::from_bits(0xffc0_0001)];
        let got = f32s(&encode::f32(&vals, 2), vals.len()).unwrap();
        let want = [f32::NAN, 1.5, f32::INFINITY, f32::NEG_INFINITY, 0.0, 3e7, f32::from_bits(0xffc0_0001)];
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.map(f32::to_bits));
    }

    #[test]
    fn test_decode_f64_java_float_forms() {
        let vals: Vec<f64> = [vec![1e17; 9], vec![0.5, f64::NAN, -2.75], vec![f64::INFINITY; 8]].concat();
        let bytes = encode::f64(&vals, 2);
        assert_eq!(&bytes[..5], &h("fe ff ff ff 07")[..]);
        let got = f64s(&bytes, vals.len()).unwrap();
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        // Form 1 over several sections, mpn 3.
        let mut bytes = encode::f64(&[1.125, 2.5], 3);
        bytes.extend(encode::i64(&[-4250]));
        assert_eq!(f64s(&bytes, 3).unwrap(), vec![1.125, 2.5, -4.25]);
        assert!(f64s(&bytes, 4).is_err());
    }

    #[test]
    fn test_decode_impossible_widths_and_runs_are_errors() {
        let e = i32s(&h("03 21 03 01"), 1).unwrap_err();
        assert!(detail(&e).contains("bit width 33"), "{}", detail(&e));
        assert!(i64s(&h("03 41 03 01"), 1).is_err());
        let mut ok = h("43 40 03 01");
        ok.extend([0u8; 64]);
        assert_eq!(i64s(&ok, 1).unwrap(), vec![0]);
        // Zero groups.
        let e = i32s(&h("03 03 01 01"), 1).unwrap_err();
        assert!(detail(&e).contains("0 groups"), "{}", detail(&e));
        // k = 0 and k = 9.
        assert!(i32s(&h("04 03 03 00 00"), 0).is_err());
        assert!(i32s(&h("07 03 03 09 00 00 00"), 9).is_err());
        // Empty section (no width byte).
        assert!(i32s(&h("00"), 0).is_err());
        // Section length beyond the data.
        let e = i32s(&h("09 03 03 01 20 00 00"), 1).unwrap_err();
        assert!(detail(&e).contains("declares 9 bytes"), "{}", detail(&e));
        // Run longer than its section, though bytes follow in the stream.
        assert!(i32s(&h("03 03 05 01 20 00 00 00 00"), 1).is_err());
    }

    #[test]
    fn test_decode_count_mismatch_is_error() {
        let bytes = encode::i32(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3]);
        let e = i32s(&bytes, 5).unwrap_err();
        assert!(detail(&e).contains("repeated run at byte 2 holds 9 values but only 5"), "{}", detail(&e));
        let e = i32s(&bytes, 10).unwrap_err();
        assert!(detail(&e).contains("holds 2 values but only 1 of 10"), "{}", detail(&e));
        let e = i32s(&bytes, 12).unwrap_err();
        assert!(detail(&e).contains("after 11 of 12"), "{}", detail(&e));
        // A count far beyond the data fails without reserving it.
        let mut out = Vec::new();
        assert!(decode_i32(&bytes, 1 << 40, &mut out).is_err());
        assert!(out.capacity() < 1 << 20);
    }

    #[test]
    fn test_decode_truncated_at_every_byte_is_error() {
        let vals: Vec<i64> = [vec![-3i64; 12], (0..20).map(|i| i * 977).collect()].concat();
        let bytes = encode::i64(&vals);
        for cut in 0..bytes.len() {
            assert!(i64s(&bytes[..cut], vals.len()).is_err(), "cut {cut}");
        }
        let v32: Vec<i32> = [vec![9; 8], vec![1, 2, 3]].concat();
        let b32 = encode::i32(&v32);
        for cut in 0..b32.len() {
            assert!(i32s(&b32[..cut], v32.len()).is_err(), "cut {cut}");
        }
        let f = encode::f32(&[1.5, f32::NAN, 3e7], 2);
        for cut in 0..f.len() {
            assert!(f32s(&f[..cut], 3).is_err(), "cut {cut}");
        }
        let bb = encode::bool(&[true, false, true]);
        for cut in 0..bb.len() {
            assert!(bools(&bb[..cut], 3).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn test_decode_width_zero_section_is_all_zeros() {
        // Not produced by writers (they use width >= 1) but well defined.
        assert_eq!(i32s(&h("03 00 05 03"), 11).unwrap(), vec![0; 11]);
        assert_eq!(i32s(&h("02 00 06"), 3).unwrap(), vec![0; 3]);
    }

    proptest! {
        #[test]
        fn test_decode_i32_round_trip(
            runs in proptest::collection::vec((any::<i32>(), 1usize..20), 0..40), packed in any::<bool>()
        ) {
            let vals: Vec<i32> = runs.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n)).collect();
            let bytes = if packed { encode::i32_packed(&vals) } else { encode::i32(&vals) };
            prop_assert_eq!(i32s(&bytes, vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_i64_round_trip(
            runs in proptest::collection::vec((any::<i64>(), 1usize..20), 0..40), shift in 0u32..64
        ) {
            let vals: Vec<i64> = runs.iter().flat_map(|&(v, n)| std::iter::repeat_n(v >> shift, n)).collect();
            prop_assert_eq!(i64s(&encode::i64(&vals), vals.len()).unwrap(), vals.clone());
            prop_assert_eq!(i64s(&encode::i64_packed(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_small_values_round_trip(vals in proptest::collection::vec(0i32..5, 0..600)) {
            prop_assert_eq!(i32s(&encode::i32(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_bool_round_trip(vals in proptest::collection::vec(any::<bool>(), 0..300)) {
            prop_assert_eq!(bools(&encode::bool(&vals), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_f64_round_trip(ks in proptest::collection::vec(-1_000_000_000i64..1_000_000_000, 0..200)) {
            let vals: Vec<f64> = ks.iter().map(|&k| k as f64 / 100.0).collect();
            prop_assert_eq!(f64s(&encode::f64(&vals, 2), vals.len()).unwrap(), vals);
        }

        #[test]
        fn test_decode_never_panics_on_garbage(
            data in proptest::collection::vec(any::<u8>(), 0..80), count in 0usize..600
        ) {
            let _ = i32s(&data, count);
            let _ = i64s(&data, count);
            let _ = f32s(&data, count);
            let _ = f64s(&data, count);
            let _ = bools(&data, count);
        }
    }
}
