//! Measurement units and the estimator seam (SPEC EST-1, EST-5).
//!
//! An [`Estimator`] declares the unit it measures in and returns a per-entry size. The UTF-8
//! estimators of SPEC EST-2 / EST-4 are spec functions (`spec::estimate`); the host-defined
//! estimators here ([`ConstantEstimator`], [`TableEstimator`]) are plain inputs for tests and
//! vectors and always declare [`MeasurementUnit::HostDefinedUnits`] (SPEC EST-1, EST-5).

use std::collections::BTreeMap;
use std::fmt;

use crate::entry::Entry;

crate::names::named_enum! {
    /// The unit every size is expressed in (SPEC EST-1), in declaration order.
    pub enum MeasurementUnit {
        /// UTF-8 bytes.
        Utf8Bytes,
        /// Estimated provider tokens (no shipped estimator declares it).
        EstimatedTokens,
        /// Units defined by the host (constant / table test estimators).
        HostDefinedUnits,
    }
}

/// A per-entry size estimator (SPEC EST-1). Must be pure (SPEC ASM-15): the same entry always
/// yields the same size. May return a negative value, which evaluation rejects (SPEC POL-3).
pub trait Estimator: Send + Sync + fmt::Debug {
    /// The declared unit.
    fn unit(&self) -> MeasurementUnit;
    /// The size of one entry.
    fn estimate(&self, entry: &Entry) -> i32;
}

/// Every entry measures the same host-defined constant (SPEC EST-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConstantEstimator(pub i32);

impl Estimator for ConstantEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::HostDefinedUnits
    }

    fn estimate(&self, _entry: &Entry) -> i32 {
        self.0
    }
}

/// Per-entry sizes by entry id, with a default for unlisted ids (SPEC EST-5).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableEstimator {
    /// Size per entry id.
    pub sizes: BTreeMap<String, i32>,
    /// Size of entries not in the table.
    pub default: i32,
}

impl Estimator for TableEstimator {
    fn unit(&self) -> MeasurementUnit {
        MeasurementUnit::HostDefinedUnits
    }

    fn estimate(&self, entry: &Entry) -> i32 {
        self.sizes
            .get(entry.id().as_str())
            .copied()
            .unwrap_or(self.default)
    }
}
