//! Message adaptation and the default content-hash classifier (SPEC CLS-1, CLS-2).
