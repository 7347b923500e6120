/**
 * The demo's settings, kept in this browser: which model answers (the scripted
 * agent or an OpenAI-compatible endpoint) and which user and agent are active.
 * The endpoint's API key is kept in sessionStorage only, so it is forgotten
 * when the browser closes.
 */
import type { LlmOption } from '../lib/index.js';
import { scriptedAgent } from '../ui/scripted-agent.js';

/** Who answers. */
export type ModelSettings = { kind: 'scripted' } | { kind: 'openai'; baseUrl: string; model: string; apiKey?: string };

/** The active user and agent. */
export interface Scope {
  userId: string;
  agentId: string;
}

/** The people and agents the demo can switch between. */
export const USERS = [
  { id: 'ana', label: 'Ana' },
  { id: 'ben', label: 'Ben' },
] as const;
export const AGENTS = [
  { id: 'helper', label: 'Helper' },
  { id: 'planner', label: 'Planner' },
] as const;

const MODEL_KEY = 'engram-demo:model';
const KEY_KEY = 'engram-demo:api-key';
const SCOPE_KEY = 'engram-demo:scope';

function readJson(storage: Storage, key: string): unknown {
  try {
    const text = storage.getItem(key);
    return text === null ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The saved model settings, or the scripted agent. */
export function loadModelSettings(): ModelSettings {
  const saved = readJson(localStorage, MODEL_KEY);
  if (!isRecord(saved) || saved['kind'] !== 'openai') return { kind: 'scripted' };
  const { baseUrl, model } = saved;
  if (typeof baseUrl !== 'string' || typeof model !== 'string') return { kind: 'scripted' };
  const apiKey = sessionStorage.getItem(KEY_KEY);
  return { kind: 'openai', baseUrl, model, ...(apiKey === null || apiKey === '' ? {} : { apiKey }) };
}

/** Saves the model settings (the key to sessionStorage). */
export function saveModelSettings(settings: ModelSettings): void {
  if (settings.kind === 'scripted') {
    localStorage.setItem(MODEL_KEY, JSON.stringify({ kind: 'scripted' }));
    sessionStorage.removeItem(KEY_KEY);
    return;
  }
  localStorage.setItem(MODEL_KEY, JSON.stringify({ kind: 'openai', baseUrl: settings.baseUrl, model: settings.model }));
  if (settings.apiKey === undefined) sessionStorage.removeItem(KEY_KEY);
  else sessionStorage.setItem(KEY_KEY, settings.apiKey);
}

/** What `engram.assistant({ model })` gets for these settings. */
export function toModel(settings: ModelSettings): LlmOption {
  if (settings.kind === 'scripted') return scriptedAgent;
  return {
    baseUrl: settings.baseUrl,
    model: settings.model,
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
  };
}

/** A short name of the model for the page. */
export function modelLabel(settings: ModelSettings): string {
  return settings.kind === 'scripted' ? 'scripted agent (offline)' : `${settings.model} at ${settings.baseUrl}`;
}

/** The saved scope, or Ana with the Helper. */
export function loadScope(): Scope {
  const saved = readJson(localStorage, SCOPE_KEY);
  const userId =
    isRecord(saved) && USERS.some((u) => u.id === saved['userId']) ? (saved['userId'] as string) : USERS[0].id;
  const agentId =
    isRecord(saved) && AGENTS.some((a) => a.id === saved['agentId']) ? (saved['agentId'] as string) : AGENTS[0].id;
  return { userId, agentId };
}

/** Remembers the scope for the next visit. */
export function saveScope(scope: Scope): void {
  localStorage.setItem(SCOPE_KEY, JSON.stringify(scope));
}

/** The conversation thread of a user with an agent. */
export function threadOf(scope: Scope): string {
  return `demo:${scope.agentId}:${scope.userId}`;
}

/** The label of a user or agent id. */
export function labelOf(id: string): string {
  return [...USERS, ...AGENTS].find((x) => x.id === id)?.label ?? id;
}
