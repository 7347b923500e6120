// The renderer's pure parts, in Node: list windowing, filters, the vector
// reader of the map and its projection, thread summaries, sync settings, the
// web bridge's session-only secrets, and bridge answers turned into errors.
import { describe, expect, it } from 'vitest';
import { Engram, HashEmbedder, isEngramError } from '../../../lib/index.js';
import { unwrap } from '../../../desktop/renderer/app-context.js';
import { summarizeThreads } from '../../../desktop/renderer/conversations-view.js';
import { forgetSummary } from '../../../desktop/renderer/forget-view.js';
import { dayBound, toMemoryFilters } from '../../../desktop/renderer/memory-filters.js';
import { memoryVectors } from '../../../desktop/renderer/memory-vectors.js';
import { project2d } from '../../../desktop/renderer/projection.js';
import { formatBytes } from '../../../desktop/renderer/status-view.js';
import { includeOf, loadSyncSettings, saveSyncSettings } from '../../../desktop/renderer/sync-settings.js';
import { refusedText, secretsNote } from '../../../desktop/renderer/sync-view.js';
import { exportFileName, passphraseProblem } from '../../../desktop/renderer/transfer-view.js';
import { pagesFor, visibleRange } from '../../../desktop/renderer/virtual-list.js';
import { createWebBridge } from '../../../desktop/renderer/web-bridge.js';

describe('visibleRange()', () => {
  it('visibleRange() covers the viewport plus overscan and stays inside the list', () => {
    expect(visibleRange(0, 580, 58, 100_000, 8)).toEqual({ start: 0, end: 19 });
    expect(visibleRange(58 * 50_000, 580, 58, 100_000, 8)).toEqual({ start: 49_992, end: 50_019 });
    expect(visibleRange(58 * 99_999, 580, 58, 100_000, 8)).toEqual({ start: 99_991, end: 100_000 });
    expect(visibleRange(0, 580, 58, 0, 8)).toEqual({ start: 0, end: 0 });
    expect(visibleRange(-40, 580, 58, 3, 8)).toEqual({ start: 0, end: 3 });
  });

  it('visibleRange() renders a bounded number of rows whatever the list size', () => {
    for (const total of [50, 1000, 100_000, 10_000_000]) {
      const { start, end } = visibleRange(total * 29, 900, 58, total, 8);
      expect(end - start).toBeLessThanOrEqual(Math.ceil(900 / 58) + 1 + 16);
    }
  });
});

describe('pagesFor()', () => {
  it('pagesFor() names every page a row range touches', () => {
    expect(pagesFor(0, 19, 200)).toEqual([0]);
    expect(pagesFor(190, 215, 200)).toEqual([0, 1]);
    expect(pagesFor(49_992, 50_019, 200)).toEqual([249, 250]);
    expect(pagesFor(5, 5, 200)).toEqual([]);
  });
});

describe('toMemoryFilters()', () => {
  it('toMemoryFilters() keeps only entered fields, trimmed, and turns days into a local-time range', () => {
    expect(toMemoryFilters({ tier: '', userId: ' ', agentId: '', projectId: '', from: '', to: '' })).toEqual({});
    const from = dayBound('2026-03-01', false)!;
    const to = dayBound('2026-03-31', true)!;
    expect(new Date(from).getHours()).toBe(0);
    expect(to - dayBound('2026-03-31', false)!).toBe(86_400_000 - 1);
    expect(
      toMemoryFilters({
        tier: 'project',
        userId: ' ana ',
        agentId: 'helper',
        projectId: 'apollo',
        from: '2026-03-01',
        to: '2026-03-31',
      }),
    ).toEqual({
      tier: 'project',
      userId: 'ana',
      agentId: 'helper',
      projectId: 'apollo',
      createdAt: { from, to },
    });
    expect(toMemoryFilters({ tier: '', userId: '', agentId: '', projectId: '', from: '', to: '2026-03-31' })).toEqual({
      createdAt: { to },
    });
    expect(dayBound('not a day', false)).toBeUndefined();
  });
});

describe('memoryVectors()', () => {
  it('memoryVectors() reads the live memories and their vectors from a real export, without tombstones', async () => {
    const engram = await Engram.open({
      name: `desktop-vectors-${Date.now()}`,
      embedder: new HashEmbedder({ dimensions: 16 }),
    });
    const { results } = await engram.add(
      [
        { role: 'user', content: 'first memory' },
        { role: 'user', content: 'second memory' },
        { role: 'user', content: 'third memory' },
      ],
      { userId: 'ana', agentId: 'helper' },
    );
    await engram.delete(results[1]!.id);
    await engram.conversation('t1').add({ role: 'user', content: 'a message, not a memory' });
    const text = await (await engram.export()).text();
    await engram.close();

    const { points, live } = memoryVectors(text, Date.now(), 100);
    expect(live).toBe(2);
    expect(points.map((p) => p.text).sort()).toEqual(['first memory', 'third memory']);
    expect(points[0]).toMatchObject({ userId: 'ana', agentId: 'helper', tier: 'long_term' });
    expect(points[0]!.vector).toBeInstanceOf(Float32Array);
    expect(points[0]!.vector.length).toBe(16);
    expect(memoryVectors(text, Date.now(), 1).points).toHaveLength(1);
  });
});

describe('project2d()', () => {
  it('project2d() puts two separated clusters apart, inside the unit square, the same way every time', () => {
    const at = (base: number[], jitter: number): Float32Array =>
      Float32Array.from(base.map((v, i) => v + Math.sin(i * 7 + jitter) * 0.01));
    const a = [1, 0, 0, 0, 0, 0];
    const b = [0, 0, 0, 0, 0, 1];
    const vectors = [at(a, 1), at(a, 2), at(a, 3), at(b, 4), at(b, 5), at(b, 6)];
    const points = project2d(vectors);
    for (const p of points) {
      expect(p.x).toBeGreaterThanOrEqual(0);
      expect(p.x).toBeLessThanOrEqual(1);
      expect(p.y).toBeGreaterThanOrEqual(0);
      expect(p.y).toBeLessThanOrEqual(1);
    }
    const gap = (i: number, j: number): number => Math.hypot(points[i]!.x - points[j]!.x, points[i]!.y - points[j]!.y);
    expect(gap(0, 1)).toBeLessThan(0.2);
    expect(gap(3, 4)).toBeLessThan(0.2);
    expect(gap(0, 3)).toBeGreaterThan(0.8);
    expect(project2d(vectors)).toEqual(points);
  });

  it('project2d() places one or two vectors without PCA', () => {
    expect(project2d([])).toEqual([]);
    expect(project2d([new Float32Array([1, 2])])).toEqual([{ x: 0.5, y: 0.5 }]);
    expect(project2d([new Float32Array([1, 2]), new Float32Array([2, 1])])).toEqual([
      { x: 0, y: 0.5 },
      { x: 1, y: 0.5 },
    ]);
  });
});

describe('summarizeThreads()', () => {
  it('summarizeThreads() counts messages per thread and orders threads by their newest message', () => {
    const m = (threadId: string, minute: number, content: string) => ({
      id: `${threadId}-${minute}`,
      threadId,
      role: 'user' as const,
      content,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
    });
    const threads = summarizeThreads([m('a', 1, 'a1'), m('b', 2, 'b1'), m('a', 3, 'a2'), m('c', 0, 'c1')]);
    expect(threads.map((t) => [t.threadId, t.messages, t.last.content])).toEqual([
      ['a', 2, 'a2'],
      ['b', 1, 'b1'],
      ['c', 1, 'c1'],
    ]);
  });
});

describe('sync settings', () => {
  it('loadSyncSettings() falls back to defaults for missing or damaged fields, and saveSyncSettings() stores no secret', () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
    };
    expect(loadSyncSettings(storage)).toEqual({
      url: '',
      collection: 'engram',
      encrypt: true,
      messages: false,
      auto: false,
      intervalMinutes: 5,
    });
    store.set('engram-desktop-sync', '{not json');
    expect(loadSyncSettings(storage).collection).toBe('engram');
    store.set('engram-desktop-sync', JSON.stringify({ url: 'https://q.example', intervalMinutes: -3, auto: 'yes' }));
    expect(loadSyncSettings(storage)).toMatchObject({ url: 'https://q.example', intervalMinutes: 5, auto: false });
    const settings = {
      url: 'http://127.0.0.1:6333',
      collection: 'mine',
      encrypt: true,
      messages: true,
      auto: true,
      intervalMinutes: 10,
    };
    saveSyncSettings(storage, settings);
    expect(loadSyncSettings(storage)).toEqual(settings);
    expect(Object.keys(JSON.parse(store.get('engram-desktop-sync')!) as object).sort()).toEqual([
      'auto',
      'collection',
      'encrypt',
      'intervalMinutes',
      'messages',
      'url',
    ]);
    expect(includeOf(settings)).toEqual(['memories', 'blocks', 'messages']);
    expect(includeOf({ ...settings, messages: false })).toEqual(['memories', 'blocks']);
  });
});

describe('web bridge', () => {
  it('createWebBridge() keeps secrets for the session only and says so', async () => {
    const bridge = createWebBridge();
    expect(await bridge.getSecret('sync-api-key')).toEqual({ ok: true, value: null });
    await bridge.setSecret('sync-api-key', 'k1');
    expect(await bridge.getSecret('sync-api-key')).toEqual({ ok: true, value: 'k1' });
    await bridge.deleteSecret('sync-api-key');
    expect(await bridge.getSecret('sync-api-key')).toEqual({ ok: true, value: null });
    expect(await createWebBridge().getSecret('sync-api-key')).toEqual({ ok: true, value: null });
    const info = await bridge.appInfo();
    expect(info.ok && info.value.shell === 'web' && !info.value.secretsPersist).toBe(true);
  });
});

describe('refusedText()', () => {
  it('refusedText() says none, or the count and each reason that occurred', () => {
    const byReason = { unauthenticated: 0, malformed: 0, 'over-limit': 0, rollback: 0, unrequested: 0 };
    expect(refusedText({ total: 0, byReason, recent: [] })).toBe('none');
    expect(refusedText({ total: 3, byReason: { ...byReason, unauthenticated: 2, rollback: 1 }, recent: [] })).toBe(
      '3: unauthenticated 2 · rollback 1',
    );
  });
});

describe('secretsNote()', () => {
  it('secretsNote() says where the keys are kept, and plainly that they are not protected when the desktop has no keyring', () => {
    const base = { shell: 'electron' as const, version: '1', platform: 'linux' };
    expect(secretsNote({ ...base, secretsPersist: true })).toBe(
      'The API key and the passphrase are encrypted by your operating system’s keychain.',
    );
    expect(secretsNote({ ...base, shell: 'web', secretsPersist: false })).toBe(
      'The API key and the passphrase are kept in memory for this session only.',
    );
    const unprotected = secretsNote({
      ...base,
      secretsPersist: false,
      secretsUnprotectedReason: 'no keyring was found, basic_text',
    });
    expect(unprotected).toBe(
      'The API key and the passphrase are kept in memory for this session only. They are not protected on this computer: no keyring was found, basic_text, so they are never written to disk.',
    );
  });
});

describe('unwrap()', () => {
  it('unwrap() returns the value or throws an engram error with the code that crossed the bridge', async () => {
    expect(await unwrap(Promise.resolve({ ok: true as const, value: 42 }))).toBe(42);
    const failure = unwrap(
      Promise.resolve({
        ok: false as const,
        error: { name: 'ValidationError', code: 'VALIDATION', message: 'name: must be one of …' },
      }),
    );
    await expect(failure).rejects.toMatchObject({
      name: 'ValidationError',
      code: 'VALIDATION',
      message: 'name: must be one of …',
    });
    const unknown = await unwrap(
      Promise.resolve({ ok: false as const, error: { name: 'Error', code: 'WHAT', message: 'odd' } }),
    ).catch((e: unknown) => e);
    expect(isEngramError(unknown)).toBe(true);
    expect(unknown).toMatchObject({ code: 'STORE' });
  });
});

describe('small formats', () => {
  it('formatBytes(), exportFileName() and forgetSummary() read as people write them', () => {
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(160_800)).toBe('157 KB');
    expect(formatBytes(3.4 * 1024 * 1024)).toBe('3.4 MB');
    expect(exportFileName(new Date(Date.UTC(2026, 11, 1, 3)))).toBe('engram-2026-12-01.jsonl');
    expect(exportFileName(new Date(Date.UTC(2026, 11, 1, 3)), true)).toBe('engram-2026-12-01-encrypted.engram');
    expect(
      forgetSummary('ana', {
        memories: 2,
        tombstones: 0,
        messages: 3,
        blocks: 1,
        traces: 0,
        history: 5,
        vectors: 2,
        terms: 9,
      }),
    ).toBe('Forgot ana: 2 memories, 3 messages, 1 core memory blocks, 0 traces, 5 history entries, 2 vectors.');
  });

  it('passphraseProblem() asks for 8 characters typed the same twice', () => {
    expect(passphraseProblem('short', 'short')).toBe('The passphrase needs at least 8 characters.');
    expect(passphraseProblem('long enough', 'long enough!')).toBe('The two passphrases differ.');
    expect(passphraseProblem('long enough', 'long enough')).toBeUndefined();
  });
});
