//! Errors of the library as Python exceptions of the `datafusion_tsfile.errors` hierarchy.
//!
//! The classes are written in Python (`errors.py`) so they can also derive from the built-in
//! exception a user would catch anyway (`FileNotFoundError`, `ValueError`, …). An error is
//! classified by the first error of a known kind in its source chain: DataFusion wraps ours
//! (`External`, `Context`, `Shared`) and object stores wrap I/O errors.

use std::error::Error as StdError;

use datafusion::error::DataFusionError;
use datafusion_tsfile::TsFileError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::types::PyAnyMethods;
use pyo3::{PyErr, Python};

/// The exception classes of `datafusion_tsfile.errors`, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file, directory or glob that names nothing.
    NotFound,
    /// Bytes that violate the format (truncated, corrupt, undecompressable).
    Corrupt,
    /// An encrypted file without a usable key, or a page that does not decrypt.
    Encryption,
    /// A construct this reader does not implement.
    Unsupported,
    /// A bad argument: unknown option, table or column, a query that does not plan.
    InvalidArgument,
    /// Anything else.
    Other,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::NotFound => "TsFileNotFoundError",
            Kind::Corrupt => "CorruptFileError",
            Kind::Encryption => "EncryptionError",
            Kind::Unsupported => "UnsupportedError",
            Kind::InvalidArgument => "InvalidArgumentError",
            Kind::Other => "TsFileError",
        }
    }
}

/// The kind of a crate error.
fn tsfile_kind(e: &TsFileError) -> Kind {
    match e {
        TsFileError::Truncated { .. } | TsFileError::Corrupt { .. } | TsFileError::Decompress { .. } => Kind::Corrupt,
        TsFileError::Encrypted { .. } | TsFileError::DecryptFailed { .. } => Kind::Encryption,
        TsFileError::Unsupported { .. } => Kind::Unsupported,
        TsFileError::InvalidArgument(_) | TsFileError::NotFound { .. } => Kind::InvalidArgument,
        TsFileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Kind::NotFound,
        TsFileError::Context { source, .. } => tsfile_kind(source),
        _ => Kind::Other,
    }
}

/// The kind of any error, from the first link of its chain that tells.
pub fn classify(e: &(dyn StdError + 'static)) -> Kind {
    let mut next: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(t) = err.downcast_ref::<TsFileError>() {
            return tsfile_kind(t);
        } else if let Some(d) = err.downcast_ref::<DataFusionError>() {
            match d {
                // A directory, glob or file without any TsFile (DataFusion's listing).
                DataFusionError::Plan(m) if m.starts_with("No files found") => return Kind::NotFound,
                DataFusionError::Plan(_)
                | DataFusionError::SQL(..)
                | DataFusionError::SchemaError(..)
                | DataFusionError::Configuration(_) => return Kind::InvalidArgument,
                DataFusionError::NotImplemented(_) => return Kind::Unsupported,
                DataFusionError::External(inner) => {
                    next = Some(inner.as_ref());
                    continue;
                }
                DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
                    next = Some(inner.as_ref());
                    continue;
                }
                DataFusionError::Shared(inner) => {
                    next = Some(inner.as_ref());
                    continue;
                }
                DataFusionError::ObjectStore(inner) => {
                    next = Some(inner.as_ref());
                    continue;
                }
                DataFusionError::IoError(io) if io.kind() == std::io::ErrorKind::NotFound => return Kind::NotFound,
                _ => {}
            }
        } else if let Some(store) = err.downcast_ref::<object_store::Error>() {
            if let object_store::Error::NotFound { .. } = store {
                return Kind::NotFound;
            }
        } else if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::NotFound {
                return Kind::NotFound;
            }
        }
        next = err.source();
    }
    Kind::Other
}

/// A Python exception of `kind` with `message`.
pub fn exception(kind: Kind, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py.import("datafusion_tsfile.errors").and_then(|m| m.getattr(kind.class_name()));
        match class {
            Ok(class) => match class.call1((message.clone(),)) {
                Ok(instance) => PyErr::from_value(instance),
                Err(e) => e,
            },
            // The package is not importable (the extension module used on its own).
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// A DataFusion error (which carries ours) as a Python exception. The message is that of
/// the crate error inside, when there is one, without DataFusion's wrapping prefixes
/// ("External error: ", "Error during planning: ").
pub fn from_datafusion(e: DataFusionError) -> PyErr {
    let kind = classify(&e);
    exception(kind, message(&e))
}

fn message(e: &DataFusionError) -> String {
    let mut next: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(t) = err.downcast_ref::<TsFileError>() {
            return t.to_string();
        }
        next = match err.downcast_ref::<DataFusionError>() {
            Some(DataFusionError::External(inner)) => Some(inner.as_ref()),
            Some(DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner)) => Some(inner.as_ref()),
            Some(DataFusionError::Shared(inner)) => Some(inner.as_ref()),
            Some(DataFusionError::Plan(m)) => return m.clone(),
            Some(DataFusionError::Execution(m)) => return m.clone(),
            Some(_) => None,
            None => err.source(),
        };
    }
    e.to_string()
}

/// A crate error as a Python exception.
pub fn from_tsfile(e: TsFileError) -> PyErr {
    let kind = tsfile_kind(&e);
    exception(kind, e.to_string())
}

/// An invalid argument.
pub fn invalid(message: impl Into<String>) -> PyErr {
    exception(Kind::InvalidArgument, message.into())
}
