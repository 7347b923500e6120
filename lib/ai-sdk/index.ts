/**
 * The `engram/ai-sdk` subpath: engram inside the Vercel AI SDK (`ai`, an optional
 * peer dependency). `memoryTools()` gives the memory tools as the SDK's `tool()`
 * objects; `MemoryChat` runs the Assistant's loop (recall before a turn, store
 * after it) around `generateText`/`streamText`.
 *
 * lib/ai-sdk is an adapter: it sits above the agent layer and is built on the
 * public Engram and the agent layer only; it is the only folder that imports `ai`,
 * and nothing in the core imports it, so the core bundle does not carry the SDK.
 */
export { memoryTools } from './memory-tools.js';
export type { MemoryToolName, MemoryToolSet } from './memory-tools.js';
export { MemoryChat } from './memory-chat.js';
export type { FinishedGeneration, FinishedPart, MemoryTurn, MemoryTurnReport } from './memory-chat.js';
export type { ToolsScope } from '../agent/tools.js';
export type { ToolUse, TurnMemoryOptions, TurnTimings } from '../agent/turn-memory.js';
