//! The writer decided per file (`format::provenance`, `read::check`): the footer's
//! signature decides, pages that decide must agree with it, a file without a signature is
//! decided by its pages, and contradictions are errors naming `writer_layout` — checked on
//! real files whose footer is edited in place (one byte: `encryptKey` null ↔ empty, or the
//! key renamed so that the footer names no writer).

use arrow_array::RecordBatch;
use datafusion_tsfile::format::WriterKind;
use datafusion_tsfile::{survey_writer, TableRead, TsFile, TsFileOptions, WriterLayout};

use crate::common::repo_path;

/// A C++-written file whose RLBE and SPRINTZ pages decide C++ (23 of them).
const CPP: &str = "tests/data/corpus/files/table_enc_5.tsfile";
/// A Java-written file whose 18 RLBE and SPRINTZ pages decide Java.
const JAVA: &str = "tests/data/java/t05_table_gzip_float_encodings.tsfile";

/// The file's bytes with the byte after the footer's `encryptKey` key (the value's length:
/// 0x01 = null, 0x00 = empty) set to `length`, or the key's last letter set to `last`.
fn edited(rel: &str, length: Option<u8>, last: Option<u8>) -> bytes::Bytes {
    let mut b = std::fs::read(repo_path(rel)).unwrap();
    let key = b"encryptKey";
    let at = b.windows(key.len()).rposition(|w| w == key).unwrap();
    if let Some(l) = length {
        b[at + key.len()] = l;
    }
    if let Some(c) = last {
        b[at + key.len() - 1] = c;
    }
    b.into()
}

fn read_all(file: &TsFile) -> Result<Vec<RecordBatch>, String> {
    let mut out = Vec::new();
    for t in file.table_names() {
        let batches = file.read_table(&t, TableRead::default()).map_err(|e| e.to_string())?;
        for b in batches {
            out.push(b.map_err(|e| e.to_string())?);
        }
    }
    Ok(out)
}

fn open(bytes: bytes::Bytes, layout: WriterLayout) -> TsFile {
    let mut o = TsFileOptions::default();
    o.read.decode.writer_layout = layout;
    TsFile::from_source(Box::new(bytes), "edited.tsfile".into(), o).unwrap()
}

#[test]
fn test_footer_decides_and_pages_that_contradict_it_fail() {
    for (rel, writer, flipped) in [(CPP, WriterKind::Cpp, 0x00), (JAVA, WriterKind::Java, 0x01)] {
        let original = TsFile::open(repo_path(rel)).unwrap();
        assert_eq!(original.structure().writer_evidence().signature().writer, Some(writer), "{rel}");
        let want = read_all(&original).unwrap();
        // The footer edited to name the other writer: the deciding pages contradict it.
        let lying = edited(rel, Some(flipped), None);
        let err = read_all(&open(lying.clone(), WriterLayout::Auto)).unwrap_err();
        assert!(
            err.contains(&format!("fit only the {writer} writer's reading")) && err.contains("writer_layout"),
            "{rel}: {err}"
        );
        assert!(err.contains("page ") && err.contains("at offset"), "the error names the page: {err}");
        let survey = survey_writer(open(lying.clone(), WriterLayout::Auto).structure()).unwrap();
        assert_eq!(survey.decision(), Some(writer.other()));
        assert!(survey.contradiction.as_deref().is_some_and(|c| c.contains("decides for the")), "{survey:?}");
        // Forcing the true writer reads every value as before.
        let forced = if writer == WriterKind::Cpp { WriterLayout::Cpp } else { WriterLayout::Java };
        assert_eq!(read_all(&open(lying, forced)).unwrap(), want, "{rel}");
        // A footer that names no writer: the deciding pages decide, every value as before.
        let unsigned = open(edited(rel, None, Some(b'z')), WriterLayout::Auto);
        assert_eq!(unsigned.structure().writer_evidence().signature().writer, None);
        assert_eq!(read_all(&unsigned).unwrap(), want, "{rel}");
        assert_eq!(unsigned.structure().writer_evidence().decision(), Some(writer));
        let (java, cpp) = unsigned.structure().writer_evidence().deciding_pages();
        assert!(if writer == WriterKind::Cpp { java == 0 && cpp > 0 } else { java > 0 && cpp == 0 }, "{java} {cpp}");
    }
}
