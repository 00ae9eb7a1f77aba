//! The package's own exceptions, raised from Rust, as pydantic-core raises its `ValidationError`:
//! no Python code maps a status to an exception or parses an error's text.
//!
//! The classes are defined once, in Python (`hybrid_compaction/_errors.py`): they have several
//! bases (`InvalidCaseError` is a `HybridCompactionError` and a `ValueError`), attributes set by
//! their constructors (`path`, `reason`, `kind`, `field`, ...) and their messages, and the Python
//! layer raises them too. This module imports each class once, on first use
//! (`pyo3::import_exception!`), and constructs it with the arguments its Python constructor
//! takes, so an exception raised here is the one the same failure raised before, attribute for
//! attribute.
//!
//! ```text
//! Failure::Invalid { path, reason }            -> InvalidCaseError(path, reason)
//! Failure::Internal { implementation, reason } -> InternalError(implementation, reason)
//! transcript(kind, path, reason)               -> UnsupportedContentError if kind is NotSupported,
//!                                                 else TranscriptError (kind, path, reason)
//! spec(py, kind, field, message)               -> SpecError({"kind", "field"?, "message"})
//! terminated(outcome, final size, hard limit)  -> CompactionTerminated(...)
//! ```

use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::import_exception!(hybrid_compaction._errors, InvalidCaseError);
pyo3::import_exception!(hybrid_compaction._errors, InternalError);
pyo3::import_exception!(hybrid_compaction._errors, SpecError);
pyo3::import_exception!(hybrid_compaction._errors, TranscriptError);
pyo3::import_exception!(hybrid_compaction._errors, UnsupportedContentError);
pyo3::import_exception!(hybrid_compaction._errors, CompactionTerminated);

/// Why a case, a trace or an argument got no answer, as the CLI sorts it: computed without the
/// GIL (a check runs detached), raised as the package's exception with it.
#[derive(Debug)]
pub enum Failure {
    /// Not valid input (the CLI's exit 2): `InvalidCaseError(path, reason)`, `path` the JSON
    /// path of the offending value, `"line N"` of a trace, or the argument's name.
    Invalid {
        /// Where.
        path: String,
        /// What was expected there.
        reason: String,
    },
    /// An implementation failed (the CLI's exit 1): `InternalError(implementation, reason)`.
    Internal {
        /// `model` or `engine`.
        implementation: String,
        /// What failed.
        reason: String,
    },
}

impl Failure {
    /// [`Failure::Invalid`].
    pub fn invalid(path: impl Into<String>, reason: impl Into<String>) -> Failure {
        Failure::Invalid {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// [`Failure::Internal`].
    pub fn internal(implementation: impl Into<String>, reason: impl Into<String>) -> Failure {
        Failure::Internal {
            implementation: implementation.into(),
            reason: reason.into(),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Invalid { path, reason } => InvalidCaseError::new_err((path, reason)),
            Failure::Internal {
                implementation,
                reason,
            } => InternalError::new_err((implementation, reason)),
        }
    }
}

/// A converter's refusal (SPEC TRN): `UnsupportedContentError` for content the closed content
/// model cannot hold (kind `NotSupported`), `TranscriptError` otherwise; `path` without `$.`.
pub fn transcript(kind: String, path: String, reason: String) -> PyErr {
    if kind == "NotSupported" {
        UnsupportedContentError::new_err((kind, path, reason))
    } else {
        TranscriptError::new_err((kind, path, reason))
    }
}

/// A typed error answer of the SPEC (ERR-1): `SpecError` with the `error` object `{"kind",
/// "field", "message"}` (`field` only when `Some`, possibly `None`: [`Field`]).
pub fn spec(py: Python<'_>, kind: &str, field: Field, message: &str) -> PyErr {
    let answer = PyDict::new(py);
    let filled = answer
        .set_item("kind", kind)
        .and_then(|()| match field {
            Field::Named(f) => answer.set_item("field", f),
            Field::Absent => Ok(()),
        })
        .and_then(|()| answer.set_item("message", message));
    match filled {
        Ok(()) => SpecError::new_err((answer.unbind(),)),
        Err(e) => e,
    }
}

/// The `field` member of a [`spec`] answer.
#[derive(Debug, Clone, Copy)]
pub enum Field<'a> {
    /// No `field` member (an error that never names one).
    Absent,
    /// `"field": value` (`None`: the error names no field this time).
    Named(Option<&'a str>),
}

/// The termination of SPEC NODE-4: `CompactionTerminated(outcome, final_size, hard_limit)`.
pub fn terminated(outcome: &str, final_size: i32, hard_limit: i32) -> PyErr {
    CompactionTerminated::new_err((outcome.to_owned(), final_size, hard_limit))
}
