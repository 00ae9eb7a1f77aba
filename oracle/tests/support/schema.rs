//! The published JSON Schemas checked with a real, maintained JSON Schema validator (`boon`,
//! draft 2020-12), so the tests judge the schemas as another implementation's tooling would.

use serde_json::Value as Json;

/// A compiled schema.
pub(crate) struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl Validator {
    /// Compiles `schema` (a root schema with its `$defs`).
    pub(crate) fn new(schema: &Json) -> Validator {
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler
            .add_resource("urn:hybrid-compaction:schema", schema.clone())
            .expect("a schema resource");
        let index = compiler
            .compile("urn:hybrid-compaction:schema", &mut schemas)
            .unwrap_or_else(|e| panic!("the schema does not compile: {e:#}"));
        Validator { schemas, index }
    }

    /// The violations of `value` (empty: valid), one line each.
    pub(crate) fn errors(&self, value: &Json) -> Vec<String> {
        match self.schemas.validate(value, self.index) {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!("{e:#}").replace('\n', " | ")],
        }
    }

    /// True if `value` is valid.
    #[allow(
        dead_code,
        reason = "not every test file that shares this module needs it"
    )]
    pub(crate) fn accepts(&self, value: &Json) -> bool {
        self.schemas.validate(value, self.index).is_ok()
    }
}
