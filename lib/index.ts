/**
 * engram's one public door: every export by name.
 */
export { Engram } from './engine/engram.js';
export type { EngramOptions } from './engine/engram.js';
export type { Message, MessageInput } from './engine/messages.js';
export { Conversation } from './memory/conversation.js';
export type { ConversationOptions, GetMessagesOptions } from './memory/conversation.js';
export type { ConversationState, StateMessage } from './memory/conversation-state.js';
export { Recall } from './memory/recall.js';
export type { RecallPage, RecallResult, RecallSearchOptions } from './memory/recall.js';
export { Blocks } from './memory/blocks.js';
export type { Block } from './memory/blocks.js';
export type { Json, Metadata, Role, Tier } from './store/rows.js';
export { newId, idToUuid, idFromUuid } from './util/id.js';
export {
  AbortError,
  ClosedError,
  DimensionMismatchError,
  EmbeddingError,
  EngramError,
  ImportError,
  IndexError,
  LimitExceededError,
  LlmError,
  ModelLoadError,
  NotFoundError,
  QuotaExceededError,
  StoreError,
  SyncError,
  ValidationError,
  isEngramError,
} from './errors.js';
export type { EngramErrorCode } from './errors.js';
