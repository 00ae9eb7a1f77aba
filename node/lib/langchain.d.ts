// Types of hybrid-compaction/langchain (lib/langchain.cjs): middleware for LangChain.js v1
// `createAgent`. The middleware objects are `createMiddleware`'s (typed loosely here, so the
// package does not depend on langchain's types).
import type { Policy, Reducer, TraceWriter } from './index.js';

export function compactionMiddleware(policy: Policy, options?: { reducer?: Reducer | null; trace?: TraceWriter | null; estimator?: string | { kind: string; [key: string]: unknown }; name?: string }): any;
export function traceMiddleware(options: { policy?: Policy; trace: TraceWriter; run?: string; name?: string }): any;
