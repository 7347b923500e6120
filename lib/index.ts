/**
 * engram's one public door: every export by name.
 */
export { Engram } from './engram.js';
export type { EngramOptions, EngramStats, ReembedResult, StoreConversionOptions } from './engram.js';
export type { ConversionProgress, ConversionResult, ConversionWork } from './engine/store-conversion.js';
export type { DamagedRow } from './engine/engine-store.js';
export type { Message } from './engine/conversation/messages.js';
export type { MessageInput } from './memory/message-input.js';
export type { AddOutcome, AddResult, MemoryItem, MemoryHistoryEntry } from './engine/memories/memories.js';
export type { ForgetResult } from './engine/forget.js';
export type { ForgetScope, MemoryScope, Scope, ScopeField } from './store/scope.js';
export type { SearchMode } from './engine/memories/memory-search.js';
export { DEFAULT_RETRIEVAL_PROFILE, isRecalled, retrievalProfile, textToEmbed } from './search/retrieval-profile.js';
export type { EmbeddingRole, QueryForm, RecallEvidence, RetrievalProfile } from './search/retrieval-profile.js';
export type { FusionScale, VectorGate } from './search/fusion.js';
export type { IndexOrigin, IndexProgress, LongWorkOptions } from './engine/vectors/vector-state.js';
export type { EmbedderRecord } from './engine/vectors/semantic-index.js';
export type { TransferOptions, TransferProgress } from './engine/transfer/transfer.js';
export type { ExportDecryption, ExportEncryption, ExportOptions } from './engine/transfer/sealed-export.js';
export { isEncryptedExport } from './engine/transfer/sealed-export.js';
export type { ImportMode } from './engine/transfer/import-write.js';

export { Conversation } from './memory/conversation.js';
export type { ContextWindowOptions, ConversationOptions, GetMessagesOptions } from './memory/conversation.js';
export type { ConversationState, StateMessage } from './memory/conversation-state.js';
export type { ContextMessage, ContextWindow } from './memory/context-window.js';
export { Recall } from './memory/recall-memory.js';
export type { RecallPage, RecallResult, RecallSearchOptions } from './memory/recall-memory.js';
export { Blocks } from './memory/blocks.js';
export type { Block, BlocksOptions, BlockSetOptions } from './memory/blocks.js';
export type {
  AddOptions,
  ChatMessage,
  DeleteAllOptions,
  GetAllOptions,
  MemoryChange,
  SearchOptions,
  SearchResult,
} from './memory/long-term.js';
export { MAX_FACTS_PER_SAVE, MAX_KEYWORDS_PER_RECALL, PersistentMemory } from './memory/persistent.js';
export type { RetrieveOptions, ToolAnswer } from './memory/persistent.js';
export { Archival } from './memory/archival.js';
export type { ArchivalOptions, ArchivalResult, ArchivalSearchOptions } from './memory/archival.js';
export { MemorySystem } from './memory/memory-system.js';
export type {
  MemorySystemOptions,
  RememberOptions,
  SystemContext,
  SystemContextOptions,
  SystemRecallOptions,
  TierHit,
  TierSearchOptions,
  TraceStep,
} from './memory/memory-system.js';
export { AgentTools, TOOL_DEFINITIONS } from './agent/tools.js';
export type {
  AnthropicTool,
  JsonSchema,
  JsonSchemaType,
  OpenAiTool,
  ToolDefinition,
  ToolsScope,
} from './agent/tools.js';
export { Assistant, MAX_TOOL_CALLS_PER_ROUND } from './agent/assistant.js';
export type { AssistantOptions, SendOptions, ToolUse, TurnReport } from './agent/assistant.js';
export type { TurnMemoryOptions, TurnTimings } from './agent/turn-memory.js';

export { openAiCompatible } from './llm/chat-model.js';
export type {
  ChatCallOptions,
  ChatFunction,
  ChatModel,
  ChatTurn,
  LlmOption,
  ModelReply,
  OpenAiCompatibleOptions,
  ToolCall,
} from './llm/chat-model.js';

export type { Embedder, EmbedOptions } from './embed/embedder.js';
export {
  TransformersEmbedder,
  DEFAULT_EMBEDDING_MODEL,
  MINILM_EMBEDDING_MODEL,
  E5_SMALL_EMBEDDING_MODEL,
} from './embed/transformers-embedder.js';
export type { ModelLoadProgress, TransformersEmbedderOptions } from './embed/transformers-embedder.js';
export { KNOWN_EMBEDDING_MODELS, knownEmbeddingModel, pickEmbeddingModel } from './embed/known-models.js';
export type { KnownEmbeddingModel } from './embed/known-models.js';
export { HashEmbedder } from './embed/hash-embedder.js';
export { CachedEmbedder } from './embed/cached-embedder.js';

export type { VectorIndex, VectorHit } from './vector/vector-index.js';
export { ExactIndex } from './vector/exact-index.js';
export { HnswIndex } from './vector/hnsw-index.js';

export type { DateRange, MemoryFilters, MetadataCondition } from './search/filters.js';
export type { Json, Metadata, Role, Tier } from './store/rows.js';
export { newId, idToUuid, idFromUuid } from './util/id.js';
export {
  AbortError,
  ClosedError,
  DimensionMismatchError,
  EmbedderChangedError,
  EmbeddingError,
  EngramError,
  ImportError,
  IndexError,
  KeyError,
  LimitExceededError,
  LlmError,
  ModelLoadError,
  NotFoundError,
  QuotaExceededError,
  ReembedBusyError,
  StoreError,
  SyncError,
  ToolCallError,
  ValidationError,
  isEngramError,
} from './errors.js';
export type { EngramErrorCode, KeyFailure, LlmFailure, SyncFailure } from './errors.js';
export type { AtRestEncryption } from './store/at-rest-key.js';
export type { SealedRowDamage } from './store/row-sealing.js';

export type { AutoSyncOptions, SyncInclude, SyncOptions } from './sync/sync-options.js';
export type { SyncProgress, SyncResult } from './sync/sync-run.js';
export type { SyncStatus } from './sync/sync-controller.js';
export type { RefusalReason, SyncRefusal, SyncRefusals } from './sync/refusals.js';
export type { EncryptionOptions } from './sync/encryption.js';
