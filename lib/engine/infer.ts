/**
 * add(messages, { infer: true }): facts extracted by the LLM are reconciled with
 * the most similar stored memories (ADD, UPDATE with history, DELETE as a
 * tombstone, NONE). When the model fails or answers in an unusable shape, the
 * raw input is stored instead and the error is reported: nothing is lost.
 */
import { isEngramError, LlmError } from '../errors.js';
import type { ChatModel } from '../llm/chat-model.js';
import { decideUpdates, extractFacts } from '../llm/extract.js';
import { compileFilters, type Scope } from '../search/filters.js';
import type { Metadata } from '../store/rows.js';
import type { EngineStore } from './engine-store.js';
import { addMemories, deleteMemories, getLive, toItem, updateMemory, type AddOutcome, type AddResult, type MemoryInput } from './memories.js';
import { searchMemories } from './memory-search.js';
import type { SemanticIndex } from './semantic-index.js';

const SIMILAR_PER_FACT = 5;

/** Extracts, decides and applies; falls back to storing the raw input on model failure. */
export async function inferAndApply(
  core: EngineStore,
  semantic: SemanticIndex,
  model: ChatModel,
  conversation: readonly { role: string; content: string }[],
  scope: Scope,
  metadata: Metadata,
  signal?: AbortSignal,
): Promise<AddOutcome> {
  let plan: { facts: string[]; existing: { id: string; text: string }[]; decisions: Awaited<ReturnType<typeof decideUpdates>> };
  try {
    const facts = await extractFacts(model, conversation, signal);
    const existing = new Map<string, string>();
    const filter = compileFilters({ tier: 'long_term' }, scope);
    for (const fact of facts) {
      const hits = await searchMemories(core, semantic, fact, { filter, limit: SIMILAR_PER_FACT, mode: 'vector', ...(signal === undefined ? {} : { signal }) });
      for (const h of hits) existing.set(h.row.id, h.row.text);
    }
    const shown = [...existing].map(([id, text]) => ({ id, text }));
    const decisions = facts.length === 0 ? [] : await decideUpdates(model, shown.map((s) => s.text), facts, signal);
    plan = { facts, existing: shown, decisions };
  } catch (e) {
    if (!(e instanceof LlmError) && !(isEngramError(e) && e.code === 'LLM')) throw e;
    const raw: MemoryInput[] = conversation
      .filter((m) => m.role !== 'system')
      .map((m) => ({ text: m.content, tier: 'long_term', scope, metadata: { ...metadata, role: m.role, inferred: false } }));
    const stored = await addMemories(core, semantic, raw, signal);
    return {
      results: stored.map(({ item, added }) => ({ ...item, event: added ? 'ADD' : 'NONE' })),
      error: { code: e.code, message: e.message },
    };
  }

  const results: AddResult[] = [];
  for (const d of plan.decisions) {
    const target = d.target === undefined ? undefined : plan.existing[d.target];
    if (d.event === 'ADD') {
      const [added] = await addMemories(core, semantic, [{ text: d.text, tier: 'long_term', scope, metadata: { ...metadata, inferred: true } }], signal);
      results.push({ ...added!.item, event: added!.added ? 'ADD' : 'NONE' });
      continue;
    }
    const row = target === undefined ? undefined : await getLive(core, target.id);
    if (row === undefined) continue; // deleted meanwhile
    if (d.event === 'UPDATE' && d.text !== row.text) {
      const updated = await updateMemory(core, semantic, row.id, { text: d.text }, signal);
      results.push({ ...updated, event: 'UPDATE', previous: row.text });
    } else if (d.event === 'DELETE') {
      await deleteMemories(core, semantic, [row.id]);
      results.push({ ...toItem(row), event: 'DELETE', previous: row.text });
    } else {
      results.push({ ...toItem(row), event: 'NONE' });
    }
  }
  return { results };
}
