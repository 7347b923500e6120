import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { ValidationError, type Engram } from '../../lib/index.js';
import { Engram as EngramClass } from '../../lib/index.js';
import { openStore } from '../../lib/engine/open-store.js';
import { ScopeTable, type ScopeColumns } from '../../lib/engine/vectors/scope-table.js';
import { EngramDb } from '../../lib/store/schema.js';
import { openTemp } from '../helpers.js';
import { quickEmbedderOverlaps, slowEmbedderWaits } from './overlapped-add-cases.js';

let engram: Engram;

beforeEach(async () => {
  engram = await openTemp({ embedder: new HashEmbedder({ dimensions: 256 }) });
});
afterEach(async () => {
  await engram.close();
});

const add = async (text: string, options: Parameters<Engram['add']>[1] = { userId: 'ana' }) =>
  (await engram.add(text, options)).results[0]!;

describe('add() near-duplicate handling', () => {
  it('add() returns the standing memory as NONE for the same statement phrased differently', async () => {
    const first = await add("I'm allergic to peanuts");
    for (const again of ['I am allergic to peanuts', 'Oh, I am allergic to peanuts!', "i'm ALLERGIC to peanuts."]) {
      const r = await add(again);
      expect(r).toMatchObject({ id: first.id, event: 'NONE', memory: "I'm allergic to peanuts" });
    }
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(1);
  });

  it('add() keeps distinct facts apart however close their vectors', async () => {
    const texts = [
      'I am allergic to peanuts',
      'I am not allergic to peanuts',
      'I am allergic to shellfish',
      'He is allergic to peanuts',
      'I was allergic to peanuts',
      'I have 2 cats',
      'I have 3 cats',
    ];
    for (const t of texts) expect((await add(t)).event).toBe('ADD');
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(texts.length);
  });

  it('add() never merges across scopes or tiers', async () => {
    const ana = await add("I'm allergic to peanuts", { userId: 'ana' });
    const bo = await add('I am allergic to peanuts', { userId: 'bo' });
    const anaHelper = await add('I am allergic to peanuts', { userId: 'ana', agentId: 'helper' });
    const anaRun = await add('I am allergic to peanuts', { userId: 'ana', runId: 'r1' });
    const ids = new Set([ana.id, bo.id, anaHelper.id, anaRun.id]);
    expect(ids.size).toBe(4);
    for (const r of [bo, anaHelper, anaRun]) expect(r.event).toBe('ADD');
    // Within each scope, the near duplicate still folds into that scope's memory.
    expect(await add("I'm allergic to peanuts!", { userId: 'bo' })).toMatchObject({ id: bo.id, event: 'NONE' });
    expect(await add("I'm allergic to peanuts!", { userId: 'ana', agentId: 'helper' })).toMatchObject({
      id: anaHelper.id,
      event: 'NONE',
    });
  });

  it('add() folds near duplicates within one batch of messages', async () => {
    const { results } = await engram.add(
      [
        { role: 'user', content: "I'm vegetarian." },
        { role: 'user', content: 'I am vegetarian' },
        { role: 'user', content: 'I am vegan' },
      ],
      { userId: 'ana' },
    );
    expect(results.map((r) => r.event)).toEqual(['ADD', 'NONE', 'ADD']);
    expect(results[1]!.id).toBe(results[0]!.id);
  });

  it("add() with dedupe 'exact' stores rephrasings, with 'off' even the same text", async () => {
    const first = await add("I'm allergic to peanuts");
    expect((await add('I am allergic to peanuts', { userId: 'ana', dedupe: 'exact' })).event).toBe('ADD');
    expect(await add("I'm allergic to peanuts", { userId: 'ana', dedupe: 'exact' })).toMatchObject({
      id: first.id,
      event: 'NONE',
    });
    const copy = await add("I'm allergic to peanuts", { userId: 'ana', dedupe: 'off' });
    expect(copy.event).toBe('ADD');
    expect(copy.id).not.toBe(first.id);
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(3);
  });

  it('add() does not fold into a deleted memory', async () => {
    const first = await add("I'm allergic to peanuts");
    await engram.delete(first.id);
    const again = await add('I am allergic to peanuts');
    expect(again.event).toBe('ADD');
    expect(again.id).not.toBe(first.id);
  });

  it('add() follows an edit: the old wording no longer folds into the memory, the new one does', async () => {
    const first = await add("I'm allergic to peanuts");
    await engram.update(first.id, 'I like green tea');
    expect((await add('I am allergic to peanuts')).event).toBe('ADD');
    expect(await add('I like green tea!')).toMatchObject({ id: first.id, event: 'NONE' });
  });

  it('add() finds the standing statement among hundreds of close memories of its scope', async () => {
    // Hundreds of standing texts that share most words: the one saying the same is found however many neighbours it has.
    const texts = Array.from({ length: 300 }, (_, i) => `I am allergic to peanuts and item ${i}`);
    await engram.add(
      texts.map((content) => ({ role: 'user' as const, content })),
      { userId: 'ana' },
    );
    const target = await add('I am allergic to peanuts and item 150');
    expect(target.event).toBe('NONE');
    expect(await add("I'm allergic to peanuts and item 150!")).toMatchObject({ id: target.id, event: 'NONE' });
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(300);
  });

  it('add() folds into memories of an earlier session, from the index snapshot and from an older snapshot without statement keys', async () => {
    const name = `near-reopen-${Date.now()}`;
    const embedder = new HashEmbedder({ dimensions: 256 });
    const first = await EngramClass.open({ name, embedder });
    const standing = (await first.add("I'm allergic to peanuts", { userId: 'ana' })).results[0]!;
    await first.flush();
    await first.close();

    const second = await EngramClass.open({ name, embedder });
    expect((await second.ready()).index).toBe('snapshot');
    expect((await second.add('I am allergic to peanuts', { userId: 'ana' })).results[0]).toMatchObject({
      id: standing.id,
      event: 'NONE',
    });
    await second.flush();
    await second.close();

    // A snapshot written before statement keys existed: the keys are made again from the stored texts.
    const { db } = await openStore(name);
    const record = (await db.meta.get('indexSnapshot'))!.value as {
      scopeColumns?: ScopeColumns;
      scopes?: unknown[][];
      statements?: string;
    };
    delete record.statements;
    record.scopes = ScopeTable.fromColumns(record.scopeColumns)!
      .toTuples()
      .map((tuple) => tuple.slice(0, -1));
    delete record.scopeColumns;
    await db.meta.put({ key: 'indexSnapshot', value: record });
    db.close();
    const third = await EngramClass.open({ name, embedder });
    expect((await third.add('Oh, I am allergic to peanuts!', { userId: 'ana' })).results[0]).toMatchObject({
      id: standing.id,
      event: 'NONE',
    });
    expect((await third.getAll({ userId: 'ana' })).total).toBe(1);
    await third.close();
  });

  it('add() calls in flight at once store each statement once (exact and near), per scope', async () => {
    const variants = [
      "I'm allergic to peanuts",
      'I am allergic to peanuts',
      "I'm allergic to peanuts",
      'Oh, I am allergic to peanuts!',
    ];
    const outcomes = await Promise.all([
      ...variants.map((t) => add(t, { userId: 'ana' })),
      ...variants.map((t) => add(t, { userId: 'bo' })),
      add('I have 2 cats', { userId: 'ana' }),
      add('I have 3 cats', { userId: 'ana' }),
    ]);
    const ana = outcomes.slice(0, 4);
    const bo = outcomes.slice(4, 8);
    expect(new Set(ana.map((r) => r.id)).size).toBe(1);
    expect(new Set(bo.map((r) => r.id)).size).toBe(1);
    expect(ana[0]!.id).not.toBe(bo[0]!.id);
    expect(ana.filter((r) => r.event === 'ADD')).toHaveLength(1);
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(3);
    expect((await engram.getAll({ userId: 'bo' })).total).toBe(1);
    // With 'exact', in flight: the same text once, a rephrasing apart.
    const exact = await Promise.all(
      ['I like tea', 'I like tea', 'i like tea!'].map((t) => add(t, { userId: 'cy', dedupe: 'exact' })),
    );
    expect(exact[0]!.id).toBe(exact[1]!.id);
    expect(exact[2]!.id).not.toBe(exact[0]!.id);
    expect((await engram.getAll({ userId: 'cy' })).total).toBe(2);
    // Every memory stored is searchable at once, and only once.
    const { results } = await engram.search('allergic to peanuts', { userId: 'ana', limit: 10 });
    expect(results.filter((r) => r.memory.includes('peanuts'))).toHaveLength(1);
  });

  it('add() in flight on two instances of one store (two tabs) stores the statement once', async () => {
    const name = `near-tabs-${Date.now()}`;
    const embedder = new HashEmbedder({ dimensions: 256 });
    const a = await EngramClass.open({ name, embedder });
    const b = await EngramClass.open({ name, embedder });
    await Promise.all([a.ready(), b.ready()]);
    const outcomes = await Promise.all([
      a.add("I'm allergic to peanuts", { userId: 'ana' }),
      b.add('I am allergic to peanuts', { userId: 'ana' }),
    ]);
    expect(outcomes[0].results[0]!.id).toBe(outcomes[1].results[0]!.id);
    expect((await a.getAll({ userId: 'ana' })).total).toBe(1);
    await a.close();
    await b.close();
  });

  it('add() rejects an unknown dedupe mode', async () => {
    await expect(engram.add('x', { dedupe: 'fuzzy' as never })).rejects.toThrow(ValidationError);
  });
});

describe('add() checks duplicates from the index, and its write overlaps a quick embedder', () => {
  it('add() finds the standing text when a damaged vector kept its memory out of the index', async () => {
    const name = `dup-damaged-${Math.random().toString(36).slice(2)}`;
    const embedder = new HashEmbedder({ dimensions: 64 });
    const a = await EngramClass.open({ name, embedder });
    const first = (await a.add('I like green tea', { userId: 'ana' })).results[0]!;
    await a.add('something else entirely', { userId: 'ana' });
    await a.close();
    // The vector damaged on disk and the snapshot gone: the rebuilt index leaves the memory out.
    const db = new EngramDb(name);
    await db.open();
    await db.vectors.update(first.id, { vector: new Float32Array(64).fill(Number.NaN) });
    await db.meta.delete('indexSnapshot');
    db.close();
    const b = await EngramClass.open({ name, embedder });
    for (const dedupe of ['exact', 'near'] as const) {
      expect((await b.add('I like green tea', { userId: 'ana', dedupe })).results[0], dedupe).toMatchObject({
        id: first.id,
        event: 'NONE',
      });
    }
    expect((await b.getAll({ userId: 'ana' })).total).toBe(2);
    expect((await b.stats()).damagedRows).toContainEqual(expect.objectContaining({ table: 'vectors', key: first.id }));
    await b.close();
  });

  it(
    'add() with a quick embedder writes its rows while the vectors are computed: all of it lands, searchable, duplicates still found',
    quickEmbedderOverlaps,
  );

  it(
    'add() with a slow embedder waits for its vectors before its write: the store stays readable meanwhile',
    slowEmbedderWaits,
  );
});
