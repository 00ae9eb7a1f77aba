// The ES module entry point of hybrid-compaction/vitest (lib/vitest.cjs).
import hook from './vitest.cjs';

export const { setup, teardown } = hook;
