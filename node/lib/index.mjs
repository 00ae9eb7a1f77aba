// The ES module entry point: the CommonJS module's exports (lib/index.cjs), by name.
import hc from './index.cjs';

export const {
  HybridCompactionError,
  InvalidCaseError,
  InternalError,
  SpecError,
  TranscriptError,
  UnsupportedContentError,
  CompactionTerminated,
  IMPLEMENTATIONS,
  TRANSCRIPT_FORMATS,
  version,
  run,
  policy,
  verify,
  evaluate,
  check,
  schema,
  countTokens,
  workload,
  fromOpenAI,
  fromAnthropic,
  fromOpenAIResponses,
  fromLangChain,
  Compaction,
  Compactor,
  compact,
  compactSync,
  TraceWriter,
  TraceWriteError,
} = hc;
export default hc;
