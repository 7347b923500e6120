/**
 * What each chat turn did (recalled, stored, timings), kept next to the
 * conversation so the page can show it again after a reload. The messages and
 * memories themselves live in engram's IndexedDB store; this is the page's own
 * record of the turn reports, keyed by the id of the assistant's reply.
 */
import type { TurnReport } from '../lib/index.js';

/** The part of a turn report the page shows. */
export interface TurnDetails {
  recalled: { id: string; memory: string; score: number; similarity?: number }[];
  stored: { id: string; memory: string; event: string }[];
  timings: TurnReport['timings'];
  model: string;
}

const PREFIX = 'engram-demo:turn:';

/** The details of a turn report. */
export function detailsOf(report: TurnReport, model: string): TurnDetails {
  return {
    recalled: report.recalledMemories.map((m) => ({
      id: m.id,
      memory: m.memory,
      score: m.score,
      ...(m.similarity === undefined ? {} : { similarity: m.similarity }),
    })),
    stored: report.stored.map((m) => ({ id: m.id, memory: m.memory, event: m.event })),
    timings: report.timings,
    model,
  };
}

/** Saves the details of the turn whose reply is `messageId`. */
export function saveTurn(messageId: string, details: TurnDetails): void {
  try {
    localStorage.setItem(PREFIX + messageId, JSON.stringify(details));
  } catch {
    // A full localStorage only costs the details after a reload; the turn itself is stored.
  }
}

/** The saved details of a reply, if any. */
export function loadTurn(messageId: string): TurnDetails | undefined {
  const text = localStorage.getItem(PREFIX + messageId);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as TurnDetails;
  } catch {
    return undefined;
  }
}

/** Forgets every saved turn (with "forget everything"). */
export function clearTurns(): void {
  const keys: string[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key?.startsWith(PREFIX) === true) keys.push(key);
  }
  for (const key of keys) localStorage.removeItem(key);
}
