// Types of hybrid-compaction/vitest (lib/vitest.cjs): a vitest `globalSetup` module.

/** Makes the run's trace directory (HC_TRACE_DIR) before the test workers start. */
export function setup(): void;
/** Checks every trace written during the run; a violation fails it (exit code 1). */
export function teardown(): void;
