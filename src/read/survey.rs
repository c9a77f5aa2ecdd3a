//! A survey of the writer evidence in a whole file, for `tsfile inspect`: every page of a
//! writer-dependent encoding (SPRINTZ INT64/TIMESTAMP/DOUBLE, RLBE FLOAT/DOUBLE) is decoded
//! both ways and judged by its statistics ([`crate::read::check`]), and the counts are put
//! beside the footer's signature ([`crate::format::provenance`]).
//!
//! Queries never need this: they decide from the footer, or from the deciding pages they
//! read. The survey shows a user why a file reads the way it does, and finds a file whose
//! pages contradict its footer before a query does.

use crate::encoding::{decode_f32, decode_f64, decode_i64, writer_dependent, DecodeOptions, WriterLayout};
use crate::error::{Result, ResultExt};
use crate::format::chunk::PageIter;
use crate::format::provenance::{FooterSignature, WriterKind};
use crate::format::{ByteSource, ChunkHeader, ChunkRole, FileReader, Statistics, TsDataType};
use crate::read::check::{ValueCheck, Verdict};
use crate::read::column::count_present;
use crate::read::page::{payload, split_nonaligned, split_value_page, PageBuffers, PageCodec};

/// What a file says about its writer, footer and pages together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterSurvey {
    /// The footer's signature.
    pub footer: FooterSignature,
    /// Pages of writer-dependent encodings that were checked.
    pub pages: u64,
    /// Pages whose statistics accept only the Java writer's reading.
    pub java_pages: u64,
    /// Pages whose statistics accept only the C++ writer's reading.
    pub cpp_pages: u64,
    /// Pages whose two readings are the same values (nothing to decide).
    pub same_pages: u64,
    /// Pages that cannot decide (both or neither reading accepted, the readings differing):
    /// they follow the file's decision.
    pub undecided_pages: u64,
    /// The first page deciding against the footer, or against the other deciding pages.
    pub contradiction: Option<String>,
    /// Why pages were not surveyed (encrypted pages without a key), if they were not.
    pub skipped: Option<String>,
}

impl WriterSurvey {
    /// The file's writer: the footer's, else the deciding pages' when they agree.
    pub fn decision(&self) -> Option<WriterKind> {
        self.footer.writer.or(match (self.java_pages, self.cpp_pages) {
            (j, 0) if j > 0 => Some(WriterKind::Java),
            (0, c) if c > 0 => Some(WriterKind::Cpp),
            _ => None,
        })
    }
}

/// Survey every writer-dependent page of `file` (module doc). Pages of an encrypted file
/// are surveyed only when `file` has a decryptor.
pub fn survey_writer<S: ByteSource>(file: &FileReader<S>) -> Result<WriterSurvey> {
    let mut survey = WriterSurvey {
        footer: file.writer_evidence().signature(),
        pages: 0,
        java_pages: 0,
        cpp_pages: 0,
        same_pages: 0,
        undecided_pages: 0,
        contradiction: None,
        skipped: None,
    };
    if file.declares_encryption() && file.decryptor().is_none() {
        survey.skipped = Some("the pages are encrypted and no key was given".into());
        return Ok(survey);
    }
    let mut bufs = PageBuffers::default();
    for device in file.all_devices()? {
        for series in file.series(&device)? {
            for meta in &series.chunks {
                let chunk = file.read_chunk(meta.offset)?;
                let h = &chunk.header;
                let (Ok(encoding), Ok(data_type)) = (h.encoding(), h.data_type()) else { continue };
                if !writer_dependent(encoding, data_type) {
                    continue;
                }
                let codec = PageCodec::new(file, h)?;
                for (i, page) in PageIter::new(h, &chunk.data)?.enumerate() {
                    let page = page?;
                    if page.header.is_empty_value_page {
                        continue;
                    }
                    let stats = page.header.statistics.as_ref().unwrap_or(&meta.statistics);
                    let at = format!("series '{}' of {}, page {i} at offset {}", series.measurement, device.device, page.header.offset);
                    let data = payload(&codec, i, &page, &mut bufs, &DecodeOptions::default()).with_context(|| at.clone())?;
                    let verdicts = judge(h, data_type, data, stats).with_context(|| at.clone())?;
                    survey.record(verdicts, &at);
                }
            }
        }
    }
    Ok(survey)
}

/// The two readings of a page: `None` when they are the same values (or the page has no
/// values statistics to judge by), else the Java and the C++ verdicts.
type Verdicts = Option<(Verdict, Verdict)>;

impl WriterSurvey {
    fn record(&mut self, verdicts: Verdicts, at: &str) {
        self.pages += 1;
        let decided = match verdicts {
            None => {
                self.same_pages += 1;
                return;
            }
            Some((j, c)) => match (j.accepted(), c.accepted()) {
                (true, false) => WriterKind::Java,
                (false, true) => WriterKind::Cpp,
                _ => {
                    self.undecided_pages += 1;
                    return;
                }
            },
        };
        match decided {
            WriterKind::Java => self.java_pages += 1,
            WriterKind::Cpp => self.cpp_pages += 1,
        }
        let against = self.footer.writer.filter(|w| *w != decided).is_some() || (self.java_pages > 0 && self.cpp_pages > 0);
        if against && self.contradiction.is_none() {
            self.contradiction = Some(format!("{at} decides for the {decided} writer"));
        }
    }
}

/// Decode a writer-dependent page both ways and judge each reading by `stats`.
fn judge(h: &ChunkHeader, data_type: TsDataType, data: &[u8], stats: &Statistics) -> Result<Verdicts> {
    let encoding = h.encoding()?;
    let (values, count) = match h.role() {
        ChunkRole::NonAligned => (split_nonaligned(data)?.1, usize::try_from(stats.count)?),
        ChunkRole::AlignedValue => {
            let vp = split_value_page(data)?;
            (vp.values, count_present(vp.bitmap, vp.rows))
        }
        ChunkRole::AlignedTime => (data, usize::try_from(stats.count)?),
    };
    let check = if h.role() == ChunkRole::AlignedTime {
        crate::read::check::PageCheck::time(stats, None).values
    } else {
        ValueCheck::from_statistics(stats)
    };
    let Some(check) = check else { return Ok(None) };
    let opts = |w: WriterKind| DecodeOptions { writer_layout: WriterLayout::from(w), ..DecodeOptions::default() };
    macro_rules! both {
        ($decode:ident, $verdict:ident, $bits:expr) => {{
            let (mut j, mut c) = (Vec::new(), Vec::new());
            $decode(encoding, values, count, &mut j, &opts(WriterKind::Java))?;
            $decode(encoding, values, count, &mut c, &opts(WriterKind::Cpp))?;
            let bits = $bits;
            if j.len() == c.len() && j.iter().zip(&c).all(|(a, b)| bits(*a) == bits(*b)) {
                return Ok(None);
            }
            Some((check.$verdict(&j), check.$verdict(&c)))
        }};
    }
    Ok(match data_type {
        TsDataType::Float => both!(decode_f32, verdict_f32, |v: f32| v.to_bits()),
        TsDataType::Double => both!(decode_f64, verdict_f64, f64::to_bits),
        _ => both!(decode_i64, verdict_i64, |v: i64| v),
    })
}
