/**
 * Fitting a conversation into a model's context: the system message and core
 * memory blocks always, then the newest messages that fit a token budget.
 */
import type { BlockRow, MessageRow, Role } from '../store/rows.js';

/** A message ready for a chat model. */
export interface ContextMessage {
  role: Role;
  content: string;
  name?: string;
  toolCallId?: string;
}

/** What contextWindow() returns. */
export interface ContextWindow {
  messages: ContextMessage[];
  /** Estimated tokens of `messages`. */
  tokens: number;
  /** True when the system message and blocks alone exceed the budget. */
  overBudget: boolean;
  /** What did not fit: how many messages, their estimated tokens, and their ids. */
  omitted: { messages: number; tokens: number; ids: string[] };
}

/** Rough token count: about four characters a token, plus a few per message. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4) + 4;
}

function toContext(row: MessageRow): ContextMessage {
  const m: ContextMessage = { role: row.role, content: row.content };
  if (row.name !== undefined) m.name = row.name;
  if (row.toolCallId !== undefined) m.toolCallId = row.toolCallId;
  return m;
}

/** The core memory blocks as one system message. */
export function blocksMessage(blocks: readonly BlockRow[]): ContextMessage | undefined {
  if (blocks.length === 0) return undefined;
  const body = blocks
    .map((b) => `<${b.label} characters="${b.value.length}/${b.limit}">\n${b.value}\n</${b.label}>`)
    .join('\n');
  return { role: 'system', content: `Core memory:\n${body}` };
}

/** Builds the window from the context rows (in order) and the agent's blocks. */
export function buildContextWindow(
  rows: readonly MessageRow[],
  blocks: readonly BlockRow[],
  maxTokens: number,
): ContextWindow {
  const head = rows[0]?.role === 'system' ? rows[0] : undefined;
  const body = head === undefined ? rows : rows.slice(1);
  const fixed = fixedMessages(head, blocks);
  let tokens = fixed.reduce((t, m) => t + estimateTokens(m.content), 0);
  const overBudget = tokens > maxTokens;
  const kept: MessageRow[] = [];
  let i = body.length - 1;
  for (; i >= 0; i--) {
    const cost = estimateTokens(body[i]!.content);
    if (tokens + cost > maxTokens) break;
    tokens += cost;
    kept.unshift(body[i]!);
  }
  const left = body.slice(0, i + 1);
  return {
    messages: [...fixed, ...kept.map(toContext)],
    tokens,
    overBudget,
    omitted: omissionOf(left),
  };
}

/** The messages every window holds: the thread's system message (when it opens with one), then core memory. */
function fixedMessages(head: MessageRow | undefined, blocks: readonly BlockRow[]): ContextMessage[] {
  const fixed: ContextMessage[] = [];
  if (head !== undefined) fixed.push(toContext(head));
  const core = blocksMessage(blocks);
  if (core !== undefined) fixed.push(core);
  return fixed;
}

/** What the `left` messages that did not fit add up to. */
function omissionOf(left: readonly MessageRow[]): ContextWindow['omitted'] {
  return {
    messages: left.length,
    tokens: left.reduce((t, m) => t + estimateTokens(m.content), 0),
    ids: left.map((m) => m.id),
  };
}
