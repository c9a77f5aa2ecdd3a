//! Which implementation wrote a file, as far as its footer and its pages tell.
//!
//! The Java and C++ writers store SPRINTZ INT64/TIMESTAMP/DOUBLE and RLBE FLOAT/DOUBLE pages
//! with different meanings for the same bytes (`encoding::WriterLayout`). A page alone cannot
//! always tell them apart (a page holding NaN or infinities may fit neither reading's
//! statistics exactly), but one writer wrote every page of a file, and the file carries more
//! evidence than any page. This module keeps that evidence, per file:
//!
//! * the **footer signature** ([`FooterSignature`]), from the version byte and the
//!   properties that every writer we know stores in `TsFileMetadata`:
//!
//!   | writer | version | `encryptKey` | `encryptType` |
//!   | --- | --- | --- | --- |
//!   | Java (IoTDB 1.x) | 3 | — | — |
//!   | Java (TsFile 1.x/2.x, IoTDB 2.x) | 4 | a value (`""` when unencrypted) | `UNENCRYPTED` or `org.apache.tsfile.encrypt.UNENCRYPTED` |
//!   | C++ (PyPI `tsfile` 2.5.0) | 4 | **no value** (null) | `org.apache.tsfile.encrypt.UNENCRYPTED` |
//!
//!   A null `encryptKey` names the C++ writer, any stored value (empty or a key) the Java
//!   writer; a v4 file without `encryptKey` has no signature. This is evidence, not proof:
//!   a page whose statistics contradict it is an error, never silently re-read;
//! * the **deciding pages** seen while reading ([`WriterEvidence::record_page`]): a page of a
//!   writer-dependent encoding whose statistics accept exactly one writer's reading. In a file
//!   without a signature they make the decision; in any file a deciding page of the other
//!   writer is a contradiction.
//!
//! [`WriterEvidence::decision`] is the file's writer: the signature's, else the deciding
//! pages' when they agree. It is shared by every reader of the file (it lives in
//! [`crate::format::FileReader`]), so pages read later follow what earlier pages decided.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Result, TsFileError};
use crate::format::TsFileMetadata;

/// One of the two writers whose layouts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriterKind {
    /// The Java implementation (Apache IoTDB, the reference writer).
    Java,
    /// The C++ implementation (the PyPI `tsfile` package among others).
    Cpp,
}

impl WriterKind {
    /// `java` or `cpp` (the `writer_layout` option's values).
    pub fn name(self) -> &'static str {
        match self {
            WriterKind::Java => "java",
            WriterKind::Cpp => "cpp",
        }
    }

    /// The other writer.
    pub fn other(self) -> WriterKind {
        match self {
            WriterKind::Java => WriterKind::Cpp,
            WriterKind::Cpp => WriterKind::Java,
        }
    }
}

impl std::fmt::Display for WriterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WriterKind::Java => "Java",
            WriterKind::Cpp => "C++",
        })
    }
}

/// What a file's version byte and properties say about its writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FooterSignature {
    /// The writer the footer names, if it names one.
    pub writer: Option<WriterKind>,
    /// Why, in words (shown by `tsfile inspect` and `tsfile_metadata()`).
    pub evidence: &'static str,
}

impl FooterSignature {
    /// The signature of a parsed footer.
    pub fn of(metadata: &TsFileMetadata) -> FooterSignature {
        if metadata.version == crate::format::VERSION_V3 {
            return FooterSignature {
                writer: Some(WriterKind::Java),
                evidence: "version 3 file (only the Java writer of IoTDB 1.x writes version 3)",
            };
        }
        match metadata.property("encryptKey") {
            Some(None) => FooterSignature {
                writer: Some(WriterKind::Cpp),
                evidence: "property encryptKey stored without a value (the C++ writer)",
            },
            Some(Some(_)) => FooterSignature {
                writer: Some(WriterKind::Java),
                evidence: "property encryptKey stored with a value (the Java writer)",
            },
            None => FooterSignature { writer: None, evidence: "no encryptKey property: the footer does not name its writer" },
        }
    }
}

/// The evidence about one file's writer: its footer signature and the deciding pages read so
/// far (module doc). Shared by every reader of the file; counts only grow.
#[derive(Debug)]
pub struct WriterEvidence {
    signature: FooterSignature,
    java_pages: AtomicU64,
    cpp_pages: AtomicU64,
}

impl Clone for WriterEvidence {
    fn clone(&self) -> Self {
        WriterEvidence {
            signature: self.signature,
            java_pages: AtomicU64::new(self.java_pages.load(Ordering::Relaxed)),
            cpp_pages: AtomicU64::new(self.cpp_pages.load(Ordering::Relaxed)),
        }
    }
}

impl WriterEvidence {
    /// Evidence of a file with footer signature `signature` and no page read yet.
    pub fn new(signature: FooterSignature) -> WriterEvidence {
        WriterEvidence { signature, java_pages: AtomicU64::new(0), cpp_pages: AtomicU64::new(0) }
    }

    /// The footer's part of the evidence.
    pub fn signature(&self) -> FooterSignature {
        self.signature
    }

    /// Deciding pages seen so far: `(java, cpp)`.
    pub fn deciding_pages(&self) -> (u64, u64) {
        (self.java_pages.load(Ordering::Relaxed), self.cpp_pages.load(Ordering::Relaxed))
    }

    /// The file's writer: the footer's, else that of the deciding pages read so far when
    /// there are some and they agree; `None` while nothing decides.
    pub fn decision(&self) -> Option<WriterKind> {
        if let Some(w) = self.signature.writer {
            return Some(w);
        }
        match self.deciding_pages() {
            (j, 0) if j > 0 => Some(WriterKind::Java),
            (0, c) if c > 0 => Some(WriterKind::Cpp),
            _ => None,
        }
    }

    /// Record a page whose statistics accept only `writer`'s reading. An error when that
    /// contradicts the file's decision (the footer's writer, or pages that decided the other
    /// way); `page` names the page in the message.
    pub fn record_page(&self, writer: WriterKind, page: &str) -> Result<()> {
        if let Some(w) = self.decision().filter(|w| *w != writer) {
            return Err(self.contradiction(w, writer, page));
        }
        let counter = match writer {
            WriterKind::Java => &self.java_pages,
            WriterKind::Cpp => &self.cpp_pages,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        // Another thread may have recorded the other writer meanwhile: check again.
        match self.deciding_pages() {
            (j, c) if j > 0 && c > 0 => Err(self.contradiction(writer.other(), writer, page)),
            _ => Ok(()),
        }
    }

    /// The error for a page whose statistics accept only `page_writer`'s reading in a file
    /// decided for `file_writer`.
    pub fn contradiction(&self, file_writer: WriterKind, page_writer: WriterKind, page: &str) -> TsFileError {
        let why = match self.signature.writer {
            Some(_) => self.signature.evidence.to_string(),
            None => format!("earlier pages of this file decided for the {file_writer} writer"),
        };
        TsFileError::corrupt(
            page.to_string(),
            None,
            format!(
                "its statistics fit only the {page_writer} writer's reading, but the file was written by the {file_writer} writer \
                 ({why}); the evidence contradicts itself, so nothing is guessed: option writer_layout = {} or {} reads every page \
                 of the file one way",
                file_writer.name(),
                page_writer.name()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::metadata::Property;

    fn meta(version: u8, props: &[(&str, Option<&[u8]>)]) -> TsFileMetadata {
        TsFileMetadata {
            table_index: Vec::new(),
            table_schemas: Vec::new(),
            meta_offset: 0,
            bloom_filter: None,
            properties: props.iter().map(|(k, v)| Property { key: k.to_string(), value: v.map(<[u8]>::to_vec) }).collect(),
            version,
            v3_device_index: None,
        }
    }

    #[test]
    fn test_signatures() {
        let cpp_type: &[u8] = b"org.apache.tsfile.encrypt.UNENCRYPTED";
        let cpp = meta(4, &[("encryptLevel", Some(b"0")), ("encryptType", Some(cpp_type)), ("encryptKey", None)]);
        assert_eq!(FooterSignature::of(&cpp).writer, Some(WriterKind::Cpp));
        let java = meta(4, &[("encryptLevel", Some(b"0")), ("encryptKey", Some(b"")), ("encryptType", Some(b"UNENCRYPTED"))]);
        assert_eq!(FooterSignature::of(&java).writer, Some(WriterKind::Java));
        let old_java = meta(4, &[("encryptKey", Some(b"")), ("encryptType", Some(cpp_type))]);
        assert_eq!(FooterSignature::of(&old_java).writer, Some(WriterKind::Java));
        let keyed = meta(4, &[("encryptKey", Some(b"16,17,18"))]);
        assert_eq!(FooterSignature::of(&keyed).writer, Some(WriterKind::Java));
        assert_eq!(FooterSignature::of(&meta(4, &[])).writer, None);
        assert_eq!(FooterSignature::of(&meta(3, &[])).writer, Some(WriterKind::Java));
    }

    #[test]
    fn test_pages_decide_a_file_without_signature() {
        let e = WriterEvidence::new(FooterSignature::of(&meta(4, &[])));
        assert_eq!(e.decision(), None);
        e.record_page(WriterKind::Cpp, "page 0").unwrap();
        e.record_page(WriterKind::Cpp, "page 1").unwrap();
        assert_eq!(e.decision(), Some(WriterKind::Cpp));
        let err = e.record_page(WriterKind::Java, "page 2 at offset 99").unwrap_err().to_string();
        assert!(err.contains("page 2 at offset 99") && err.contains("writer_layout") && err.contains("earlier pages"), "{err}");
        assert_eq!(e.deciding_pages(), (0, 2), "a contradicting page is not counted");
    }

    #[test]
    fn test_a_page_against_the_signature_is_an_error() {
        let e = WriterEvidence::new(FooterSignature::of(&meta(4, &[("encryptKey", None)])));
        e.record_page(WriterKind::Cpp, "p").unwrap();
        let err = e.record_page(WriterKind::Java, "value page 3").unwrap_err().to_string();
        assert!(err.contains("value page 3") && err.contains("encryptKey stored without a value"), "{err}");
        assert_eq!(e.clone().deciding_pages(), (0, 1));
    }
}
