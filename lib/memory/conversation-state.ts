/**
 * The state dict of a conversation: a versioned JSON snapshot of one thread,
 * and its validation on load.
 */
import { ValidationError } from '../errors.js';
import type { EngineStore } from '../engine/engine-store.js';
import type { Message, ThreadRef } from '../engine/conversation/messages.js';
import { newId } from '../util/id.js';
import { validateMessage } from './message-input.js';
import type { MessageRow } from '../store/rows.js';
import { isPlainObject, optionalId, requireId } from '../util/validate.js';

/** One message of a state dict: the message plus its place in the thread. */
export interface StateMessage extends Message {
  position: number;
  inContext: boolean;
}

/** What Conversation.stateDict() returns and loadStateDict() takes. */
export interface ConversationState {
  version: 1;
  threadId: string;
  agentId?: string;
  userId?: string;
  messages: StateMessage[];
}

/**
 * Validates a state dict and turns it into rows of the target thread. Throws
 * ValidationError naming the field. A state from another thread (a copy or a
 * fork) gets fresh message ids, so the source thread keeps its own; the target
 * conversation's agent and user, when it has them, win over the state's.
 */
export function validateState(core: EngineStore, target: ThreadRef, state: unknown): MessageRow[] {
  const { threadId } = target;
  if (!isPlainObject(state)) throw new ValidationError('state', 'must be an object from stateDict()');
  if (state['version'] !== 1) throw new ValidationError('state.version', `must be 1, got ${String(state['version'])}`);
  const copied = requireId('state.threadId', state['threadId']) !== threadId;
  const agentId = target.agentId ?? optionalId('state.agentId', state['agentId']);
  const userId = target.userId ?? optionalId('state.userId', state['userId']);
  const messages = state['messages'];
  if (!Array.isArray(messages)) throw new ValidationError('state.messages', 'must be an array');
  const thread = {
    threadId,
    ...(agentId === undefined ? {} : { agentId }),
    ...(userId === undefined ? {} : { userId }),
  };
  const seen = new Set<string>();
  return messages.map((m: unknown, i) => {
    const field = `state.messages[${i}]`;
    const { position, inContext, input } = stateMessageParts(m, field);
    const row = validateMessage(core, thread, input, field);
    if (seen.has(row.id)) throw new ValidationError(`${field}.id`, `duplicate id ${row.id}`);
    seen.add(row.id);
    if (copied) row.id = newId(row.createdAt);
    row.position = position;
    row.inContext = inContext ? 1 : 0;
    return row;
  });
}

/** Checks one message of a state and splits it: its place in the thread, and the message input without the thread's ids. */
function stateMessageParts(
  m: unknown,
  field: string,
): { position: number; inContext: boolean; input: Record<string, unknown> } {
  if (!isPlainObject(m)) throw new ValidationError(field, 'must be an object');
  const { position, inContext, ...input } = m;
  // The thread's own ids come from the state's header, not from each message.
  delete input['threadId'];
  delete input['agentId'];
  delete input['userId'];
  if (typeof position !== 'number' || !Number.isFinite(position))
    throw new ValidationError(`${field}.position`, 'must be a finite number');
  if (typeof inContext !== 'boolean') throw new ValidationError(`${field}.inContext`, 'must be a boolean');
  if (typeof input['id'] !== 'string') throw new ValidationError(`${field}.id`, 'must be a string');
  if (typeof input['createdAt'] !== 'number')
    throw new ValidationError(`${field}.createdAt`, 'must be epoch milliseconds');
  return { position, inContext, input };
}
