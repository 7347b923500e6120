/**
 * A message as a caller gives it, and its check at the door: every conversation
 * face turns input into a row here, so the engine only ever sees valid rows.
 */
import type { EngineStore } from '../engine/engine-store.js';
import { messageHash, type ThreadRef } from '../engine/conversation/messages.js';
import { ROLES, type MessageRow, type Metadata, type Role } from '../store/rows.js';
import { newId } from '../util/id.js';
import { checkOptions, id, metadata, nonEmptyText, oneOf, optional, time, type OptionsSpec } from '../util/options.js';

/** A message as a caller gives it. */
export interface MessageInput {
  role: Role;
  content: string;
  /** Name of the speaker or tool. */
  name?: string;
  /** Id of the tool call a tool message answers. */
  toolCallId?: string;
  /** Keeps a caller's own id; one is made when absent. */
  id?: string;
  /** When the message was said; now when absent. */
  createdAt?: Date | string | number;
  metadata?: Metadata;
}

/** The checks of {@link MessageInput}; content and metadata are held to the store's `maxContentBytes`. */
function messageSpec(maxContentBytes: number) {
  return {
    role: oneOf(ROLES),
    content: nonEmptyText(maxContentBytes),
    name: optional(id),
    toolCallId: optional(id),
    id: optional(id),
    createdAt: optional(time),
    metadata: optional(metadata(maxContentBytes)),
  } satisfies OptionsSpec<MessageInput>;
}

/** Validates one input message and turns it into a row (position and context set later). */
export function validateMessage(core: EngineStore, thread: ThreadRef, input: unknown, field: string): MessageRow {
  const spec = messageSpec(core.settings.maxContentBytes);
  const m = checkOptions(field, input, spec, 'must be an object with role and content');
  const { role, content, name, toolCallId, metadata } = m;
  const row: MessageRow = {
    id: m.id ?? newId(core.now()),
    threadId: thread.threadId,
    role,
    content,
    createdAt: m.createdAt ?? core.now(),
    position: 0,
    hash: messageHash(role, content, name),
    inContext: 1,
  };
  if (thread.agentId !== undefined) row.agentId = thread.agentId;
  if (thread.userId !== undefined) row.userId = thread.userId;
  if (name !== undefined) row.name = name;
  if (toolCallId !== undefined) row.toolCallId = toolCallId;
  if (metadata !== undefined) row.metadata = metadata;
  return row;
}
