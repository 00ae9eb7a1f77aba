//! `named_enum!`: a fieldless enum with its declaration order (`ALL`) and stable names.
//!
//! The ADR material (capability, composition, trust, artifact diagnostics, configuration)
//! declares many small categorical enums whose *order* is part of the contract (SPEC CAP-2,
//! CMP-2, TRU-2, RHY-2, ATR-2). One macro keeps every such enum uniform: `ALL` lists the values
//! in declaration order and `name()` is the reference implementation's identifier.

macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable name (identical to the reference implementation's identifier).
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub(crate) use named_enum;
