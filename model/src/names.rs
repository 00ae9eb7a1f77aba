//! The named categorical enums of the vocabulary, declared from one list of variants each.
//!
//! Every categorical enum of the vocabulary (entry kinds, outcomes, stages, rejection reasons,
//! error kinds, units, policy fields, and the diagnostics mirrors) has *stable names*: the
//! reference implementation's identifiers, which the vectors and the wire format carry. Written by
//! hand, each enum repeats its variant list three times (the declaration, `ALL`, the `name`
//! table). [`named_enum!`] declares the enum and derives all three (plus `NAMES`, `from_name`
//! and the index into `ALL`) from the single list, so a variant cannot be missing from `ALL` or
//! misspelled in its name.
//!
//! A diagnostics mirror (SPEC DIA-2: a fixed one-to-one mirror of an internal enum) is declared
//! with the enum it mirrors, by [`named_enum_with_mirror!`] and a trailing
//! `mirror pub enum Name;`: its variants come from the same list, and the macro generates the
//! mapping `From<Internal> for Mirror`, variant to same-named variant. So `EntryKind` and
//! `Category` (and `Outcome` / `CompactionOutcome`, `Stage` / `StageCategory`) share one list.
//!
//! The `strum` crate offers the same through derives (`VariantArray`, `IntoStaticStr`,
//! `Display`, `EnumString`); it is not used because it would still need `ALL` / `name` wrappers
//! per enum (or leak its traits into every caller) and the mirror mapping is not among its
//! derives, while these two short macros cover every case with no dependency.

/// Declares a categorical enum with stable names: `ALL` and `NAMES` (declaration order), `name`,
/// `from_name`, `index` and `Display`, all derived from the one variant list.
macro_rules! named_enum {
    (
        $(#[$doc:meta])*
        pub enum $name:ident {
            $($(#[$vdoc:meta])* $variant:ident),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];

            /// Every stable name, in declaration order (`NAMES[i]` is `ALL[i].name()`).
            pub const NAMES: [&'static str; [$(stringify!($variant)),+].len()] =
                [$(stringify!($variant)),+];

            /// The position in `ALL` (the declaration index).
            pub const fn index(self) -> usize {
                // Fieldless, no explicit discriminants: 0, 1, ... in declaration order, as `ALL`.
                self as usize
            }

            /// The stable name (identical to the reference implementation's identifier).
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant)),+
                }
            }

            /// The value whose stable name is `name`, if any.
            pub fn from_name(name: &str) -> Option<$name> {
                // A `match` on the names: the compiler compares lengths first, then bytes
                // (readers of traces and cases look names up by the thousand).
                match name {
                    $(stringify!($variant) => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl $crate::names::Named for $name {
            const TYPE: &'static str = stringify!($name);
            fn names() -> &'static [&'static str] {
                &$name::NAMES
            }
            fn name(self) -> &'static str {
                $name::name(self)
            }
            fn from_name(name: &str) -> Option<$name> {
                $name::from_name(name)
            }
        }
    };
}

/// What every categorical enum of the vocabulary offers, for code generic over them (a wire
/// format that writes each by its stable name and lists the names in its schema).
pub trait Named: Copy + 'static {
    /// The enum's name (`Outcome`, `Stage`, ...).
    const TYPE: &'static str;
    /// Every stable name, in declaration order.
    fn names() -> &'static [&'static str];
    /// This value's stable name.
    fn name(self) -> &'static str;
    /// The value whose stable name is `name`, if any.
    fn from_name(name: &str) -> Option<Self>;
}

/// The mirror form of [`named_enum!`]: the enum, then its diagnostics mirror (SPEC DIA-2) with
/// the same variants and the fixed mapping.
macro_rules! named_enum_with_mirror {
    (
        $(#[$doc:meta])*
        pub enum $name:ident {
            $($(#[$vdoc:meta])* $variant:ident),+ $(,)?
        }
        $(#[$mdoc:meta])*
        mirror pub enum $mirror:ident;
    ) => {
        $crate::names::named_enum! {
            $(#[$doc])*
            pub enum $name {
                $($(#[$vdoc])* $variant),+
            }
        }

        $crate::names::named_enum! {
            $(#[$mdoc])*
            pub enum $mirror {
                $(
                    #[doc = concat!("Mirrors `", stringify!($name), "::", stringify!($variant), "`.")]
                    $variant
                ),+
            }
        }

        impl From<$name> for $mirror {
            /// The fixed one-to-one mapping (SPEC DIA-2).
            fn from(value: $name) -> $mirror {
                match value {
                    $($name::$variant => $mirror::$variant),+
                }
            }
        }
    };
}

pub(crate) use {named_enum, named_enum_with_mirror};
