// Types of the package `hybrid-compaction` (lib/index.cjs, lib/index.mjs). The wire shapes
// (docs/WIRE.md) are given loosely as `Json` objects: their JSON Schemas are `schema()`'s.

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A wire entry (docs/WIRE.md, "Entries"): `{id, kind, role, author?, parts}`. */
export interface Entry {
  id: string;
  kind: string;
  role: string;
  author?: string;
  parts: Json[];
  [key: string]: Json | undefined;
}

/** A wire policy (SPEC POL-1). */
export interface Policy {
  hardLimit: number;
  triggerMargin: number;
  recentMessageRetentionCount: number;
  maximumCompactionAttempts: number;
  preservationLabel: string;
  preservationVersion: number;
  estimator: { kind: string; [key: string]: Json };
}

/** The arguments of `policy()`: every number required; `estimator` defaults to "utf8". */
export interface PolicyOptions {
  hardLimit: number;
  triggerMargin: number;
  recentMessageRetentionCount: number;
  maximumCompactionAttempts: number;
  preservationLabel: string;
  preservationVersion: number;
  estimator?: string | { kind: string; [key: string]: Json };
}

/** `Verify`'s answer (SPEC VER-1). */
export interface Verification {
  outcome: 'Accepted' | 'Rejected';
  rejectionReasons: string[];
  missingRequiredEntryIds: string[];
  invalidEntryIds: string[];
  preservationOnlyFallbackEntryIds: string[];
  [key: string]: Json;
}

/** `hybrid-compaction check --json`'s report; a conformant trace has no `violations`. */
export interface CheckReport {
  calls: number;
  runs: number;
  replayed: number;
  violations: Array<{ clause: string; [key: string]: Json }>;
  [key: string]: Json;
}

/** Which implementation answers: the executable specification or the engine. */
export type Implementation = 'model' | 'engine';

/** Options of the converters: ids per adapted message (TRN-5), kind overrides (CLS-1). */
export interface ConvertOptions {
  ids?: Array<string | null>;
  overrides?: Record<number, string>;
}

export class HybridCompactionError extends Error {}
export class InvalidCaseError extends HybridCompactionError {
  constructor(path: string, reason: string);
  readonly path: string;
  readonly reason: string;
}
export class InternalError extends HybridCompactionError {
  constructor(implementation: string, reason: string);
  readonly implementation: string;
  readonly reason: string;
}
export class SpecError extends HybridCompactionError {
  constructor(answer: { kind: string; field?: string | null; entryId?: string; message: string });
  readonly answer: { [key: string]: Json };
  readonly kind: string;
  readonly field: string | null;
  readonly entryId: string | null;
}
export class TranscriptError extends HybridCompactionError {
  constructor(kind: string, path: string, reason: string);
  readonly kind: string;
  readonly path: string;
  readonly reason: string;
}
export class UnsupportedContentError extends TranscriptError {}
export class CompactionTerminated extends HybridCompactionError {
  constructor(outcome: string, finalSize: number, hardLimit: number);
  readonly outcome: 'Irreducible' | 'ConcurrentMutationLimit' | string;
  readonly finalSize: number;
  readonly hardLimit: number;
}

export class TraceWriteError extends HybridCompactionError {
  constructor(path: string, reason: string);
  readonly path: string;
  readonly reason: string;
}

/** Writes a trace (docs/TRACE.md): call records of compactions, observed provider calls. */
export class TraceWriter {
  constructor(path?: string | null, options?: { content?: boolean; producer?: string });
  readonly path: string;
  readonly closed: boolean;
  observe(history: unknown[], sent: unknown[] | null, options?: { policy?: Policy; run?: string; call?: string; format?: string; dispatch?: 'answered' | 'failed' | 'refused'; note?: string }): string;
  endRun(run?: string): void;
  close(): void;
}

/** A reducer: your proposer, sync or async, given messages in your format; never trusted. */
export type Reducer<M = unknown> = (messages: M[]) => M[] | null | undefined | Promise<M[] | null | undefined>;

/** The options of a compaction. */
export interface CompactOptions<M = unknown> {
  reducer?: Reducer<M> | null;
  estimator?: string | { kind: string; [key: string]: Json };
  format?: 'openai-chat' | 'anthropic-messages' | 'langchain' | 'openai-responses' | 'ai-sdk';
  trace?: TraceWriter | null;
}

/** The result of one compaction. */
export class Compaction<M = unknown> {
  readonly messages: M[];
  readonly system: unknown;
  readonly format: string;
  readonly outcome: 'WithinLimit' | 'Reduced' | 'PreservationFallback';
  readonly assembly: { [key: string]: Json };
  readonly diagnostics: { [key: string]: Json };
  readonly events: Array<{ [key: string]: Json }>;
}

/** A long-lived compactor: one run, one memo of sizes, calls one at a time. */
export class Compactor<M = unknown> {
  constructor(policy: Policy, options?: CompactOptions<M> & { workflow?: string });
  compact(messages: M[], options?: { system?: unknown; overrides?: Record<number, string> }): Promise<Compaction<M>>;
  compactSync(messages: M[], options?: { system?: unknown; overrides?: Record<number, string> }): Compaction<M>;
  readonly memoStats: { hits: number; misses: number; cached: number };
  close(): void;
}

export const IMPLEMENTATIONS: readonly Implementation[];
export const TRANSCRIPT_FORMATS: readonly string[];
export const version: string;

export function run(c: { op: string; [key: string]: unknown } | string, implementation?: Implementation): { [key: string]: Json };
export function policy(options: PolicyOptions): Policy;
export function verify(original: Entry[], proposed: Array<string | Entry>, policy: Policy, options?: { implementation?: Implementation }): Verification;
export function evaluate(entries: Entry[], policy: Policy, options?: { implementation?: Implementation }): { [key: string]: Json };
export function check(trace: string | URL | Array<{ [key: string]: unknown }>, options?: { implementation?: Implementation }): CheckReport;
export function schema(which?: 'case' | 'output' | 'vector-file' | 'trace'): { [key: string]: Json };
export function countTokens(texts: string[], encoding?: 'o200k_base' | 'cl100k_base'): number[];
export function workload(messages: number, options?: { seed?: number; format?: string; ending?: string }): { [key: string]: Json };
export function fromOpenAI(messages: unknown[], options?: ConvertOptions): Entry[];
export function fromAnthropic(messages: unknown[], system?: string | unknown[] | null, options?: ConvertOptions): Entry[];
export function fromOpenAIResponses(items: unknown[], instructions?: string | unknown[] | null, options?: ConvertOptions): Entry[];
export function fromLangChain(messages: unknown[], options?: ConvertOptions): Entry[];
export function fromAISDK(messages: unknown[], options?: ConvertOptions): Entry[];
export function compact<M>(messages: M[], policy: Policy, options?: CompactOptions<M> & { system?: unknown; overrides?: Record<number, string> }): Promise<Compaction<M>>;
export function compactSync<M>(messages: M[], policy: Policy, options?: CompactOptions<M> & { system?: unknown; overrides?: Record<number, string> }): Compaction<M>;

declare const hc: {
  HybridCompactionError: typeof HybridCompactionError;
  InvalidCaseError: typeof InvalidCaseError;
  InternalError: typeof InternalError;
  SpecError: typeof SpecError;
  TranscriptError: typeof TranscriptError;
  UnsupportedContentError: typeof UnsupportedContentError;
  CompactionTerminated: typeof CompactionTerminated;
  Compaction: typeof Compaction;
  Compactor: typeof Compactor;
  compact: typeof compact;
  compactSync: typeof compactSync;
  TraceWriter: typeof TraceWriter;
  TraceWriteError: typeof TraceWriteError;
  IMPLEMENTATIONS: typeof IMPLEMENTATIONS;
  TRANSCRIPT_FORMATS: typeof TRANSCRIPT_FORMATS;
  version: string;
  run: typeof run;
  policy: typeof policy;
  verify: typeof verify;
  evaluate: typeof evaluate;
  check: typeof check;
  schema: typeof schema;
  countTokens: typeof countTokens;
  workload: typeof workload;
  fromOpenAI: typeof fromOpenAI;
  fromAnthropic: typeof fromAnthropic;
  fromOpenAIResponses: typeof fromOpenAIResponses;
  fromLangChain: typeof fromLangChain;
  fromAISDK: typeof fromAISDK;
};
export default hc;
