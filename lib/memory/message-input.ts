/**
 * A message as a caller gives it, and its check at the door: every conversation
 * face turns input into a row here, so the engine only ever sees valid rows.
 */
import type { EngineStore } from '../engine/engine-store.js';
import { messageHash, type ThreadRef } from '../engine/conversation/messages.js';
import { ROLES, type MessageRow, type Metadata, type Role } from '../store/rows.js';
import { newId } from '../util/id.js';
import {
  optionalId,
  requireMetadata,
  requireOneOf,
  requireOptions,
  requireText,
  requireTime,
} from '../util/validate.js';

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

const MESSAGE_KEYS = ['role', 'content', 'name', 'toolCallId', 'id', 'createdAt', 'metadata'] as const;

/** Validates one input message and turns it into a row (position and context set later). */
export function validateMessage(core: EngineStore, thread: ThreadRef, input: unknown, field: string): MessageRow {
  requireOptions(field, input, MESSAGE_KEYS, 'must be an object with role and content');
  const role = requireOneOf(`${field}.role`, input['role'], ROLES);
  const content = requireText(`${field}.content`, input['content'], core.settings.maxContentBytes);
  const name = optionalId(`${field}.name`, input['name']);
  const toolCallId = optionalId(`${field}.toolCallId`, input['toolCallId']);
  const id = optionalId(`${field}.id`, input['id']) ?? newId(core.now());
  const createdAt =
    input['createdAt'] === undefined ? core.now() : requireTime(`${field}.createdAt`, input['createdAt']);
  const row: MessageRow = {
    id,
    threadId: thread.threadId,
    role,
    content,
    createdAt,
    position: 0,
    hash: messageHash(role, content, name),
    inContext: 1,
  };
  if (thread.agentId !== undefined) row.agentId = thread.agentId;
  if (thread.userId !== undefined) row.userId = thread.userId;
  if (name !== undefined) row.name = name;
  if (toolCallId !== undefined) row.toolCallId = toolCallId;
  if (input['metadata'] !== undefined)
    row.metadata = requireMetadata(`${field}.metadata`, input['metadata'], core.settings.maxContentBytes);
  return row;
}
