//! Error categories shared by every boundary (SPEC ERR-1).
//!
//! Each library error enum maps its variants onto one [`ErrorKind`], the language-neutral category
//! the conformance vectors record. The kinds mirror the .NET exception families the reference
//! implementation raises, so another implementation can compare categories without comparing
//! exception types or texts.

crate::names::named_enum! {
    /// The language-neutral category of an error (SPEC ERR-1).
    pub enum ErrorKind {
        /// A numeric input outside its allowed range (.NET `ArgumentOutOfRangeException`).
        OutOfRange,
        /// A required input is absent (.NET `ArgumentNullException`).
        NullArgument,
        /// An input is malformed or inconsistent (.NET `ArgumentException`).
        InvalidArgument,
        /// An operation cannot proceed in the current state (.NET `InvalidOperationException`).
        InvalidOperation,
        /// A checked 32-bit sum overflowed (.NET `OverflowException`).
        Overflow,
        /// The operation observed cancellation (.NET `OperationCanceledException`).
        Cancelled,
        /// The upstream reducer broke the bridge contract (SPEC BRG-1, BRG-3).
        ReducerContract,
        /// The upstream reducer itself failed; its error propagates unchanged (SPEC ASM-4).
        ReducerFailed,
        /// A content shape outside the closed content model (.NET `NotSupportedException`).
        NotSupported,
    }
}

/// A typed error answer (SPEC ERR-1) as every boundary reports it: the language-neutral kind,
/// the offending field (a policy member, `Version` for a snapshot, ...) or entry id when the
/// SPEC names one, and an informative message (never compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedError {
    /// The category.
    pub kind: ErrorKind,
    /// The offending field, if any.
    pub field: Option<String>,
    /// The offending entry id, if any.
    pub entry_id: Option<String>,
    /// A human-readable explanation.
    pub message: String,
}

impl TypedError {
    /// An error of `kind` naming no field and no entry.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> TypedError {
        TypedError {
            kind,
            field: None,
            entry_id: None,
            message: message.into(),
        }
    }

    /// The same error naming `field`.
    pub fn with_field(mut self, field: impl Into<String>) -> TypedError {
        self.field = Some(field.into());
        self
    }

    /// The same error naming `entry_id`.
    pub fn with_entry_id(mut self, entry_id: impl Into<String>) -> TypedError {
        self.entry_id = Some(entry_id.into());
        self
    }
}

impl std::fmt::Display for TypedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}
