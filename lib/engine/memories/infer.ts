/**
 * add(messages, { infer: true }): facts extracted by the LLM are reconciled with
 * the most similar stored memories (ADD, UPDATE with history, DELETE as a
 * tombstone, NONE), all in one write transaction. When the model fails, answers
 * in an unusable shape or not in time, the raw input is stored instead and the
 * error is reported: nothing is lost.
 */
import { isEngramError, LlmError, throwIfAborted } from '../../errors.js';
import { callModel, DEFAULT_MODEL_TIMEOUT_MS, type ChatModel } from '../../llm/chat-model.js';
import { decideUpdates, extractFacts, type MemoryDecision } from '../../llm/extract.js';
import { compileFilters } from '../../search/filters.js';
import type { Scope } from '../../store/scope.js';
import { isLive, type MemoryRow, type Metadata } from '../../store/rows.js';
import type { RowChange } from '../../store/write.js';
import { utf8Length } from '../../util/hash.js';
import type { EngineStore } from '../engine-store.js';
import {
  addMemories,
  afterWrite,
  deleteChange,
  prepareAdds,
  toItem,
  updateChange,
  type AddOutcome,
  type AddResult,
  type MemoryInput,
} from './memories.js';
import { searchMemories } from './memory-search.js';
import type { SemanticIndex } from '../vectors/semantic-index.js';

const SIMILAR_PER_FACT = 5;

/** Options of {@link inferAndApply}. */
export interface InferOptions {
  signal?: AbortSignal;
  /** Deadline of each model call. @default DEFAULT_MODEL_TIMEOUT_MS (60 s) */
  timeoutMs?: number;
}

/**
 * Extracts, decides and applies; falls back to storing the raw input on model
 * failure (an error, an unusable answer, a fact over maxContentBytes, no answer
 * within `timeoutMs`). The decisions apply all or nothing: every text is
 * embedded first, then all changes go into one write transaction.
 */
export async function inferAndApply(
  core: EngineStore,
  semantic: SemanticIndex,
  model: ChatModel,
  conversation: readonly { role: string; content: string }[],
  scope: Scope,
  metadata: Metadata,
  options: InferOptions = {},
): Promise<AddOutcome> {
  const { signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const timed: ChatModel = (messages, call = {}) => callModel(model, messages, { ...call, timeoutMs });
  let plan: { existing: { id: string; text: string }[]; decisions: MemoryDecision[] };
  try {
    const facts = await extractFacts(timed, conversation, signal);
    checkSizes(core, facts);
    const existing = new Map<string, string>();
    const filter = compileFilters({ tier: 'long_term' }, scope);
    for (const fact of facts) {
      const hits = await searchMemories(core, semantic, fact, {
        filter,
        limit: SIMILAR_PER_FACT,
        mode: 'vector',
        ...(signal === undefined ? {} : { signal }),
      });
      for (const h of hits) existing.set(h.row.id, h.row.text);
    }
    const shown = [...existing].map(([id, text]) => ({ id, text }));
    const decisions =
      facts.length === 0
        ? []
        : await decideUpdates(
            timed,
            shown.map((s) => s.text),
            facts,
            signal,
          );
    checkSizes(
      core,
      decisions.filter((d) => d.event === 'ADD' || d.event === 'UPDATE').map((d) => d.text),
    );
    plan = { existing: shown, decisions };
  } catch (e) {
    if (!(e instanceof LlmError) && !(isEngramError(e) && e.code === 'LLM')) throw e;
    const raw: MemoryInput[] = conversation
      .filter((m) => m.role !== 'system')
      .map((m) => ({
        text: m.content,
        tier: 'long_term',
        scope,
        metadata: { ...metadata, role: m.role, inferred: false },
      }));
    const stored = await addMemories(core, semantic, raw, signal);
    return {
      results: stored.map(({ item, added }) => ({ ...item, event: added ? 'ADD' : 'NONE' })),
      error: { code: e.code, message: e.message },
    };
  }
  return applyDecisions(core, semantic, plan, scope, metadata, signal);
}

/** A fact from the model is held to maxContentBytes like any other text; over it, the model's answer is unusable. */
function checkSizes(core: EngineStore, texts: readonly string[]): void {
  const max = core.settings.maxContentBytes;
  for (const text of texts) {
    const bytes = utf8Length(text);
    if (bytes > max) throw new LlmError(`the model gave a fact of ${bytes} bytes, over maxContentBytes (${max})`);
  }
}

/**
 * Applies the model's decisions in one write transaction, after embedding
 * every new text: an embedding failure or an abort leaves nothing applied.
 */
async function applyDecisions(
  core: EngineStore,
  semantic: SemanticIndex,
  plan: { existing: { id: string; text: string }[]; decisions: MemoryDecision[] },
  scope: Scope,
  metadata: Metadata,
  signal: AbortSignal | undefined,
): Promise<AddOutcome> {
  const adds = plan.decisions.filter((d) => d.event === 'ADD');
  const prepared = await prepareAdds(
    core,
    semantic,
    adds.map((d) => ({ text: d.text, tier: 'long_term', scope, metadata: { ...metadata, inferred: true } })),
    signal,
  );
  const updateTexts = [...new Set(plan.decisions.filter((d) => d.event === 'UPDATE').map((d) => d.text))];
  const embedded = updateTexts.length === 0 ? undefined : await semantic.embed(updateTexts, signal);
  const vectorOf = new Map(updateTexts.map((t, i) => [t, embedded!.vectors[i]!]));
  throwIfAborted(signal);
  const results = await core.write(async () => {
    const { changes: addChanges, out: added } = await prepared.plan();
    const changes: RowChange[] = [...addChanges];
    const results: AddResult[] = [];
    // Rows as this transaction leaves them, so two decisions on one memory compose.
    const current = new Map<string, MemoryRow | undefined>();
    const live = async (id: string): Promise<MemoryRow | undefined> => {
      if (!current.has(id)) {
        const row = await core.db.memories.get(id);
        current.set(id, isLive(row, core.now()) ? row : undefined);
      }
      return current.get(id);
    };
    let nextAdd = 0;
    for (const d of plan.decisions) {
      if (d.event === 'ADD') {
        const a = added[nextAdd++]!;
        results.push({ ...a.item, event: a.added ? 'ADD' : 'NONE' });
        continue;
      }
      const target = d.target === undefined ? undefined : plan.existing[d.target];
      const row = target === undefined ? undefined : await live(target.id);
      if (row === undefined) continue; // deleted meanwhile
      if (d.event === 'UPDATE' && d.text !== row.text) {
        const change = updateChange(
          core,
          row,
          { text: d.text },
          { vector: vectorOf.get(d.text)!, embedderId: embedded!.embedder.id },
        );
        changes.push(change);
        current.set(row.id, change.after);
        results.push({ ...toItem(change.after!), event: 'UPDATE', previous: row.text });
      } else if (d.event === 'DELETE') {
        changes.push(deleteChange(core, row));
        current.set(row.id, undefined);
        results.push({ ...toItem(row), event: 'DELETE', previous: row.text });
      } else {
        results.push({ ...toItem(row), event: 'NONE' });
      }
    }
    return { changes, result: results };
  });
  afterWrite(semantic);
  return { results };
}
