// The ES module entry point of hybrid-compaction/langchain (lib/langchain.cjs).
import lc from './langchain.cjs';

export const { compactionMiddleware, traceMiddleware } = lc;
export default lc;
