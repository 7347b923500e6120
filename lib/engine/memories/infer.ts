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
import type { RowChange, WritePlan } from '../../store/write.js';
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
  type MemoryItem,
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

/** One add(…, { infer: true }) call: where it writes, for whom, and its signal. */
interface InferCall {
  readonly core: EngineStore;
  readonly semantic: SemanticIndex;
  readonly scope: Scope;
  readonly metadata: Metadata;
  readonly signal: AbortSignal | undefined;
}

/** What the model decided: the memories shown to it (a decision's `target` indexes them) and its decisions. */
interface InferPlan {
  existing: { id: string; text: string }[];
  decisions: MemoryDecision[];
}

/** An UPDATE's new text embedded (each distinct text once, before the write); null: the store moved to another model. */
type UpdateVector = (text: string) => { vector: Float32Array; embedderId: string } | null;

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
  const call: InferCall = { core, semantic, scope, metadata, signal: options.signal };
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const timed: ChatModel = (messages, modelCall = {}) => callModel(model, messages, { ...modelCall, timeoutMs });
  let plan: InferPlan;
  try {
    plan = await askModel(call, timed, conversation);
  } catch (e) {
    if (!(e instanceof LlmError) && !(isEngramError(e) && e.code === 'LLM')) throw e;
    return storeRaw(call, conversation, { code: e.code, message: e.message });
  }
  return applyDecisions(call, plan);
}

/**
 * The model's plan: the facts it extracts, the stored memories most like each
 * (vector search in the call's scope), and its decision on each fact against them.
 * Throws LlmError when the model fails or gives a text over maxContentBytes.
 */
async function askModel(
  call: InferCall,
  timed: ChatModel,
  conversation: readonly { role: string; content: string }[],
): Promise<InferPlan> {
  const facts = await extractFacts(timed, conversation, call.signal);
  checkSizes(call.core, facts);
  const existing = await similarMemories(call, facts);
  const decisions =
    facts.length === 0
      ? []
      : await decideUpdates(
          timed,
          existing.map((s) => s.text),
          facts,
          call.signal,
        );
  checkSizes(
    call.core,
    decisions.filter((d) => d.event === 'ADD' || d.event === 'UPDATE').map((d) => d.text),
  );
  return { existing, decisions };
}

/** The long-term memories of the scope most like each fact, each once, in the order found. */
async function similarMemories(call: InferCall, facts: readonly string[]): Promise<{ id: string; text: string }[]> {
  const { signal } = call;
  const existing = new Map<string, string>();
  const filter = compileFilters({ tier: 'long_term' }, call.scope);
  for (const fact of facts) {
    const hits = await searchMemories(call.core, call.semantic, fact, {
      filter,
      limit: SIMILAR_PER_FACT,
      mode: 'vector',
      ...(signal === undefined ? {} : { signal }),
    });
    for (const h of hits) existing.set(h.row.id, h.row.text);
  }
  return [...existing].map(([id, text]) => ({ id, text }));
}

/** The model failed: the conversation's messages (but the system's) stored as they are, with the error reported. */
async function storeRaw(
  call: InferCall,
  conversation: readonly { role: string; content: string }[],
  error: { code: string; message: string },
): Promise<AddOutcome> {
  const raw: MemoryInput[] = conversation
    .filter((m) => m.role !== 'system')
    .map((m) => ({
      text: m.content,
      tier: 'long_term',
      scope: call.scope,
      metadata: { ...call.metadata, role: m.role, inferred: false },
    }));
  const stored = await addMemories(call.core, call.semantic, raw, call.signal);
  return { results: stored.map(({ item, added }) => ({ ...item, event: added ? 'ADD' : 'NONE' })), error };
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
async function applyDecisions(call: InferCall, plan: InferPlan): Promise<AddOutcome> {
  const { core, semantic, scope, metadata, signal } = call;
  const adds = plan.decisions.filter((d) => d.event === 'ADD');
  const prepared = await prepareAdds(
    core,
    semantic,
    adds.map((d) => ({ text: d.text, tier: 'long_term', scope, metadata: { ...metadata, inferred: true } })),
    signal,
  );
  const updateVector = await embedUpdates(semantic, plan.decisions, signal);
  throwIfAborted(signal);
  const results = await core.write(async () => {
    const { changes, out: added } = await prepared.plan();
    return planDecisions(core, plan, [...changes], added, updateVector);
  });
  afterWrite(semantic);
  return { results };
}

/** The vectors of the UPDATE decisions' texts, each distinct text embedded once. */
async function embedUpdates(
  semantic: SemanticIndex,
  decisions: readonly MemoryDecision[],
  signal: AbortSignal | undefined,
): Promise<UpdateVector> {
  const texts = [...new Set(decisions.filter((d) => d.event === 'UPDATE').map((d) => d.text))];
  if (texts.length === 0) return () => null; // never called: no UPDATE
  const embedded = await semantic.embedForWrite(texts, signal);
  // null when the store moved to another model: the updated memories lose their old vectors (see updateChange).
  if (embedded === undefined) return () => null;
  const vectorOf = new Map(texts.map((t, i) => [t, embedded.vectors[i]!]));
  return (text) => ({ vector: vectorOf.get(text)!, embedderId: embedded.embedderId });
}

/**
 * Inside the write: every decision's result in the model's order, and the changes
 * after the adds' (`changes`). An ADD's outcome comes from prepareAdds' plan (`added`, in
 * order); the others act on the memory they target as this transaction leaves it, so two
 * decisions on one memory compose; a target deleted meanwhile is skipped.
 */
async function planDecisions(
  core: EngineStore,
  plan: InferPlan,
  changes: RowChange[],
  added: readonly { item: MemoryItem; added: boolean }[],
  updateVector: UpdateVector,
): Promise<WritePlan<AddResult[]>> {
  const results: AddResult[] = [];
  const current = rowsInWrite(core);
  let nextAdd = 0;
  for (const d of plan.decisions) {
    if (d.event === 'ADD') {
      const a = added[nextAdd++]!;
      results.push({ ...a.item, event: a.added ? 'ADD' : 'NONE' });
      continue;
    }
    const target = d.target === undefined ? undefined : plan.existing[d.target];
    const row = target === undefined ? undefined : await current.live(target.id);
    if (row === undefined) continue; // deleted meanwhile
    const decided = onExisting(core, d, row, updateVector);
    if (decided.change !== undefined) changes.push(decided.change);
    current.leave(row.id, decided.left);
    results.push(decided.result);
  }
  return { changes, result: results };
}

/** Memories as the write's transaction leaves them, each read once: `live` reads one, `leave` records what a decision left. */
function rowsInWrite(core: EngineStore): {
  live: (id: string) => Promise<MemoryRow | undefined>;
  leave: (id: string, row: MemoryRow | undefined) => void;
} {
  const current = new Map<string, MemoryRow | undefined>();
  return {
    live: async (id) => {
      if (!current.has(id)) {
        const row = await core.db.memories.get(id);
        current.set(id, isLive(row, core.now()) ? row : undefined);
      }
      return current.get(id);
    },
    leave: (id, row) => {
      current.set(id, row);
    },
  };
}

/**
 * What an UPDATE, DELETE or NONE decision does to the live memory it targets: its
 * change (none for NONE, or an UPDATE to the same text), its result, and the row it
 * leaves (undefined once deleted).
 */
function onExisting(
  core: EngineStore,
  d: MemoryDecision,
  row: MemoryRow,
  updateVector: UpdateVector,
): { change?: RowChange & { table: 'memories' }; result: AddResult; left: MemoryRow | undefined } {
  if (d.event === 'UPDATE' && d.text !== row.text) {
    const change = updateChange(core, row, { text: d.text }, updateVector(d.text));
    return { change, result: { ...toItem(change.after!), event: 'UPDATE', previous: row.text }, left: change.after };
  }
  if (d.event === 'DELETE') {
    return {
      change: deleteChange(core, row),
      result: { ...toItem(row), event: 'DELETE', previous: row.text },
      left: undefined,
    };
  }
  return { result: { ...toItem(row), event: 'NONE' }, left: row };
}
