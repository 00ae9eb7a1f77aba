#!/usr/bin/env node
'use strict';
// The `hybrid-compaction` command (run, vectors, check, schema, workload, ...), the same program
// as the Rust binary, inside Node: the published vector corpus is compiled into the addon.
const native = require('../native/index.cjs');

process.exitCode = native.main(['hybrid-compaction', ...process.argv.slice(2)]);
