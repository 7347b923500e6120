/**
 * The `engram/langchain` subpath: engram inside LangChain.js (`@langchain/core`,
 * an optional peer dependency). `EngramVectorStore` is engram's long-term memory
 * as a `VectorStore` (documents, filters, scores, `asRetriever()`);
 * `EngramChatMessageHistory` is a conversation thread as a chat message history.
 *
 * lib/langchain is an adapter: it sits above the agent layer and is built on the
 * public Engram only; it is the only folder that imports `@langchain/core`, and
 * nothing in the core imports it, so the core bundle does not carry LangChain.
 */
export { EngramVectorStore } from './vector-store.js';
export type { EngramVectorStoreFilter, EngramVectorStoreOptions } from './vector-store.js';
export { EngramChatMessageHistory } from './chat-message-history.js';
export type { EngramChatMessageHistoryOptions } from './chat-message-history.js';
