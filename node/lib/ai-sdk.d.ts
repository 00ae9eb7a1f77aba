// Types of hybrid-compaction/ai-sdk (lib/ai-sdk.cjs): the Vercel AI SDK's `prepareStep` and
// language-model middleware. Typed loosely here, so the package does not depend on `ai`'s types:
// the returned functions fit `generateText`, `streamText` and `ToolLoopAgent` (`ai` 7.x).
import type { Policy, Reducer, TraceWriter } from './index.js';

/** What `prepareStep` is given (the members these functions read). */
export interface StepOptions {
  messages: unknown[];
  instructions?: unknown;
  [key: string]: unknown;
}

/** A `prepareStep` function. */
export type PrepareStep = (options: StepOptions) => Promise<{ messages?: unknown[]; [key: string]: unknown } | undefined>;

export function compactionStep(policy: Policy, options?: { reducer?: Reducer | null; trace?: TraceWriter | null; estimator?: string | { kind: string; [key: string]: unknown }; workflow?: string }): PrepareStep;

export function traceRecorder(options: { policy?: Policy; trace: TraceWriter; run?: string; prepareStep?: (options: any) => any }): {
  prepareStep: PrepareStep;
  /** A LanguageModelMiddleware for `wrapLanguageModel`. */
  middleware: { specificationVersion: 'v4'; wrapGenerate: (options: any) => Promise<any>; wrapStream: (options: any) => Promise<any> };
  endRun(): void;
};
