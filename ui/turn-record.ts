/**
 * What a chat turn did (recalled with scores, stored, timings), as the demo page
 * and the desktop chat show it under a reply. The record itself is stored by the
 * library with the reply (`metadata.turn`, lib/agent/turn-memory.ts), so it comes
 * back with the conversation after a reload or a restart; it is read here as
 * untrusted (a damaged or imported row), field by field. The page adds only the
 * name of the model that answered, kept in localStorage by the reply's id.
 */
/** The part of a turn report the chat shows. */
export interface TurnDetails {
  recalled: { id: string; memory: string; score: number; similarity?: number }[];
  stored: { id: string; memory: string; event: string }[];
  timings: { recallMs: number; modelMs: number; storeMs: number; totalMs: number };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function list<T>(value: unknown, read: (item: Record<string, unknown>) => T | undefined): T[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: T[] = [];
  for (const item of value as unknown[]) {
    const fields = record(item);
    const read_ = fields === undefined ? undefined : read(fields);
    if (read_ === undefined) return undefined;
    out.push(read_);
  }
  return out;
}

/** The turn record of an assistant reply, or undefined when it has none or it is not well formed. */
export function turnDetailsOf(message: {
  readonly metadata?: Readonly<Record<string, unknown>>;
}): TurnDetails | undefined {
  const turn = record(message.metadata?.['turn']);
  if (turn === undefined) return undefined;
  const recalled = list(turn['recalled'], (r) => {
    const score = finite(r['score']);
    const similarity = finite(r['similarity']);
    if (typeof r['id'] !== 'string' || typeof r['memory'] !== 'string' || score === undefined) return undefined;
    return { id: r['id'], memory: r['memory'], score, ...(similarity === undefined ? {} : { similarity }) };
  });
  const stored = list(turn['stored'], (s) =>
    typeof s['id'] === 'string' && typeof s['memory'] === 'string' && typeof s['event'] === 'string'
      ? { id: s['id'], memory: s['memory'], event: s['event'] }
      : undefined,
  );
  const t = record(turn['timings']);
  const timings =
    t === undefined
      ? undefined
      : {
          recallMs: finite(t['recallMs']),
          modelMs: finite(t['modelMs']),
          storeMs: finite(t['storeMs']),
          totalMs: finite(t['totalMs']),
        };
  if (recalled === undefined || stored === undefined || timings === undefined) return undefined;
  const { recallMs, modelMs, storeMs, totalMs } = timings;
  if (recallMs === undefined || modelMs === undefined || storeMs === undefined || totalMs === undefined)
    return undefined;
  return { recalled, stored, timings: { recallMs, modelMs, storeMs, totalMs } };
}

/** The localStorage keys of one page's model labels, e.g. `engram-demo:model-of:`. */
export interface ModelLabels {
  /** Remembers which model answered the reply `messageId`. */
  save(messageId: string, label: string): void;
  /** The model that answered the reply, if known. */
  of(messageId: string): string | undefined;
  /** Forgets every label (with "forget everything"). */
  clear(): void;
}

/**
 * Model labels kept in localStorage under `prefix`.
 * @example
 * const labels = modelLabels('engram-desktop:model-of:'); labels.save(reply.id, 'llama3.2 at http://127.0.0.1:11434/v1')
 */
export function modelLabels(prefix: string): ModelLabels {
  return {
    save(messageId, label) {
      try {
        localStorage.setItem(prefix + messageId, label);
      } catch {
        // A full localStorage only costs the label; the turn and its record are stored.
      }
    },
    of(messageId) {
      return localStorage.getItem(prefix + messageId) ?? undefined;
    },
    clear() {
      const keys: string[] = [];
      for (let i = 0; i < localStorage.length; i++) {
        const key = localStorage.key(i);
        if (key?.startsWith(prefix) === true) keys.push(key);
      }
      for (const key of keys) localStorage.removeItem(key);
    },
  };
}
