//! Wire format (JSON cases, outputs, vector files).
