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
