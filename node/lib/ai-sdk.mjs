// The ES module entry point of hybrid-compaction/ai-sdk (lib/ai-sdk.cjs).
import aiSdk from './ai-sdk.cjs';

export const { compactionStep, traceRecorder } = aiSdk;
export default aiSdk;
