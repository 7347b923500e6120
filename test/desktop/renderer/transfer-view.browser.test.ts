// The desktop's import (desktop/renderer/transfer-view.ts) against the app's other works on its store, in
// real Chromium IndexedDB. A change of the store's key: an import asked while it runs waits for it (and says
// so), then closes the store and reopens it with the new passphrase, the one every opening passes from then
// on; nothing is lost and the store opens with the new passphrase only. The long works (ui/store-work.ts):
// while a re-embed or a conversion runs the import's buttons are disabled with why and a start from code is
// refused with a StoreError, nothing asked; while an import runs, the Status card's conversion
// (store-key-section.ts) is disabled with why, and everything is released however the import ends (done,
// a bad file, a wrong passphrase, cancelled, a file the shell refused). Hash embedders stand in for the models.
import { afterEach, describe, expect, it } from 'vitest';
import { Engram, HashEmbedder, type AtRestEncryption } from '../../../lib/index.js';
import { StoreWork } from '../../../ui/store-work.js';
import { CONVERSION_WORK } from '../../../ui/conversion-progress.js';
import { REEMBED_WORK } from '../../../ui/model-picker.js';
import { changeUnlock } from '../../../desktop/renderer/store-key-change.js';
import { StoreKeySection } from '../../../desktop/renderer/store-key-section.js';
import { IMPORT_WORK, TransferView, type OpenOptions } from '../../../desktop/renderer/transfer-view.js';
import type { BridgeResult, DesktopBridge, OpenedFile } from '../../../desktop/preload/bridge-api.js';
import { testAppContext } from './app-context-fixture.js';

const OLD = 'lantern orchard quietly';
const NEW = 'heron pebble saffron';
const opened: Engram[] = [];

function embedder(): () => Promise<HashEmbedder> {
  return () => Promise.resolve(new HashEmbedder({ dimensions: 16 }));
}

afterEach(async () => {
  for (const e of opened.splice(0)) if (!e.closed) await e.close();
  document.body.replaceChildren();
});

it('an import asked during a key change waits for it, then reopens the store with the new passphrase', async () => {
  const stamp = Date.now();
  const name = `desktop-transfer-key-${stamp}`;
  // The file to import: an export of another store.
  const source = await Engram.open({ name: `desktop-transfer-src-${stamp}`, embedder: embedder() });
  await source.add('The boat is moored at pier seven', { userId: 'ana' });
  const bytes = new Uint8Array(await (await source.export()).arrayBuffer());
  await source.close();

  const openOptions: OpenOptions = { encryption: { passphrase: OLD }, embedder: embedder() };
  const engram = await Engram.open({ ...openOptions, name });
  opened.push(engram);
  await engram.add('The spare key hides under the blue flowerpot', { userId: 'ana' });
  const bridge = {
    openFile: () => Promise.resolve({ ok: true, value: { name: 'boat.jsonl', bytes } }),
  } as unknown as DesktopBridge;
  const ctx = testAppContext({
    engram,
    bridge,
    dbName: name,
    protection: 'passphrase',
    showError: (e) => {
      throw e;
    },
  });
  const view = new TransferView(ctx, openOptions, new StoreWork());
  document.body.append(view.root);
  (view.root.querySelector('[data-testid="import-mode"]') as HTMLSelectElement).value = 'merge';
  const label = view.root.querySelector<HTMLElement>('[data-testid="transfer-label"]')!;
  const result = view.root.querySelector<HTMLElement>('[data-testid="transfer-result"]')!;

  // The Status card's key change, as it runs it: through the gate, adopting the new encryption when done.
  let proceed!: () => void;
  const held = new Promise<void>((resolve) => (proceed = resolve));
  const change = ctx.gate.run({ what: 'a change of the store’s key', closes: false }, async () => {
    await held;
    const changed = await changeUnlock(
      { kind: 'new-passphrase', current: OLD, next: NEW, confirm: NEW },
      {
        dbName: name,
        encryption: openOptions.encryption,
        protection: ctx.protection,
        keychainKey: () => Promise.reject(new TypeError('no keychain')),
      },
    );
    openOptions.encryption = changed.encryption;
  });

  const imported = view.import();
  await expect.poll(() => label.textContent).toBe('Waiting for a change of the store’s key to end…');
  // Meanwhile the store is open (a key change does not close it): the app keeps reading it.
  expect(ctx.engram.closed).toBe(false);
  expect((await ctx.engram.getAll()).total).toBe(1);
  proceed();
  await change;
  await imported;
  expect([result.dataset['state'], result.textContent]).toEqual([
    'done',
    'Imported boat.jsonl (merge). The store now holds 2 memories.',
  ]);
  opened.push(ctx.engram);
  expect(ctx.engram.closed).toBe(false);
  expect((await ctx.engram.getAll()).results.map((m) => m.memory).sort()).toEqual([
    'The boat is moored at pier seven',
    'The spare key hides under the blue flowerpot',
  ]);
  await ctx.engram.close();
  // On disk: the new passphrase opens the store, the old one no longer does.
  const withOld: AtRestEncryption = { passphrase: OLD };
  await expect(Engram.open({ name, encryption: withOld, embedder: embedder() })).rejects.toMatchObject({ code: 'KEY' });
  const reopened = await Engram.open({ name, encryption: { passphrase: NEW }, embedder: embedder() });
  opened.push(reopened);
  expect((await reopened.getAll()).total).toBe(2);
});

/** A plain store with one memory, the transfer view and the Status card's encryption form over one StoreWork. */
async function desktopWith(files: (() => BridgeResult<OpenedFile | null>)[]) {
  const name = `desktop-transfer-work-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const openOptions: OpenOptions = { embedder: embedder() };
  const engram = await Engram.open({ ...openOptions, name });
  opened.push(engram);
  await engram.add('The spare key hides under the blue flowerpot', { userId: 'ana' });
  /** How many times the shell was asked for a file. */
  const asked = { count: 0 };
  const bridge = {
    openFile: () => {
      asked.count++;
      const next = files.shift();
      return Promise.resolve(next === undefined ? { ok: true, value: null } : next());
    },
    appInfo: () =>
      Promise.resolve({ ok: true, value: { shell: 'web', version: 'web', platform: 'test', secretsPersist: false } }),
  } as unknown as DesktopBridge;
  const errors: unknown[] = [];
  const ctx = testAppContext({ engram, bridge, dbName: name, showError: (e) => errors.push(e) });
  const work = new StoreWork();
  const view = new TransferView(ctx, openOptions, work);
  const card = new StoreKeySection(ctx, {
    encryption: () => openOptions.encryption,
    onChanged: () => undefined,
    closeStore: () => ctx.engram.close(),
    work,
    reopenStore: async () => {
      ctx.engram = await Engram.open({ ...openOptions, name });
      opened.push(ctx.engram);
    },
  });
  document.body.append(view.root, card.root);
  await card.show();
  const el = (testid: string): HTMLElement =>
    document.querySelector<HTMLElement>(`[data-testid="${testid}"]`) ?? expect.unreachable(`no ${testid}`);
  /** [disabled, title (or null), the note under it (or null when hidden)] of a start control. */
  const control = (button: string, note: string): [boolean, string | null, string | null] => {
    const b = el(button) as HTMLButtonElement;
    const n = document.querySelector<HTMLElement>(`[data-testid="${note}"]`);
    return [b.disabled, b.getAttribute('title'), n === null || n.hidden ? null : n.textContent];
  };
  return {
    name,
    ctx,
    work,
    view,
    asked,
    errors,
    el,
    importButton: () => control('import-button', 'import-blocked'),
    unlockButton: () => control('import-unlock', 'import-blocked'),
    encryptButton: () => control('encrypt-passphrase-form-submit', 'store-key-blocked'),
    result: () => [el('transfer-result').dataset['state'], el('transfer-result').textContent],
  };
}

const BOAT = 'The boat is moored at pier seven';

/** An export of another store (sealed under `passphrase` when given), as the shell hands a chosen file. */
async function exportFile(text: string, passphrase?: string): Promise<Uint8Array> {
  const source = await Engram.open({
    name: `desktop-transfer-src-${Date.now()}-${Math.random()}`,
    embedder: embedder(),
  });
  await source.add(text, { userId: 'ana' });
  const blob = await source.export(passphrase === undefined ? {} : { encrypt: passphrase });
  await source.close();
  return new Uint8Array(await blob.arrayBuffer());
}

function chosen(name: string, bytes: Uint8Array): () => BridgeResult<OpenedFile | null> {
  return () => ({ ok: true, value: { name, bytes } });
}

describe('the import and the app’s other long works on the store (StoreWork)', () => {
  it('while a re-embed or a conversion runs, Import is disabled with why and a start is refused with a StoreError, nothing asked; once it ends the import runs', async () => {
    const d = await desktopWith([chosen('boat.jsonl', await exportFile(BOAT))]);
    expect(d.importButton()).toEqual([false, null, null]);
    for (const other of [REEMBED_WORK, CONVERSION_WORK]) {
      const release = d.work.begin(other);
      const why = `Busy: ${other} is running; ${IMPORT_WORK} can start once it ends.`;
      expect(d.importButton()).toEqual([true, why, why]);
      // A start anyway (the menu's Import…, a click on the button from code): refused, the shell not asked.
      await expect(d.view.import()).rejects.toMatchObject({ name: 'StoreError', code: 'STORE', message: why });
      // A click on the disabled button does nothing.
      d.el('import-button').click();
      expect([d.asked.count, d.result(), d.work.running, d.errors]).toEqual([0, ['idle', ''], other, []]);
      release();
      expect(d.importButton()).toEqual([false, null, null]);
    }
    await d.view.import();
    expect(d.result()).toEqual(['done', 'Imported boat.jsonl (merge). The store now holds 2 memories.']);
    expect([d.work.running, d.errors]).toEqual([undefined, []]);
    opened.push(d.ctx.engram);
  });

  it('an import holds the store from its start to the reopen: the conversion and a re-embed cannot start meanwhile; released however it ends', async () => {
    const SEALED = 'otter lantern gravel';
    const d = await desktopWith([
      chosen('boat.jsonl', await exportFile(BOAT)),
      chosen('broken.jsonl', new TextEncoder().encode('{"not":"an export"}\n')),
      chosen('sealed.engram', await exportFile('Grandma’s birthday is on the ninth of March', SEALED)),
      chosen('boat.jsonl', await exportFile(BOAT)),
      () => ({ ok: false, error: { name: 'ValidationError', code: 'VALIDATION', message: 'file: is too large' } }),
    ]);
    const conversionWhy = `Busy: ${IMPORT_WORK} is running; ${CONVERSION_WORK} can start once it ends.`;
    const free: [boolean, string | null, string | null] = [false, null, null];
    expect(d.encryptButton()).toEqual(free);

    // Held in the store gate behind a chat turn: the import has started, and holds the store's long work.
    let turnEnds!: () => void;
    const turn = d.ctx.gate.use('a chat turn', () => new Promise<void>((resolve) => (turnEnds = resolve)));
    const done = d.view.import();
    await expect.poll(() => d.el('transfer-label').textContent).toBe('Waiting for a chat turn to end…');
    expect(d.work.running).toBe(IMPORT_WORK);
    expect(d.encryptButton()).toEqual([true, conversionWhy, conversionWhy]);
    expect(() => d.work.begin(REEMBED_WORK)).toThrow(
      `Busy: ${IMPORT_WORK} is running; ${REEMBED_WORK} can start once it ends.`,
    );
    // A conversion submitted anyway (Enter in a field) is refused: said on the card, the store left open.
    (d.el('encrypt-new') as HTMLInputElement).value = 'heron pebble saffron';
    (d.el('encrypt-confirm') as HTMLInputElement).value = 'heron pebble saffron';
    (d.el('encrypt-passphrase-form') as HTMLFormElement).requestSubmit();
    expect([d.el('store-key-message').dataset['state'], d.el('store-key-message').textContent]).toEqual([
      'error',
      conversionWhy,
    ]);
    // A second import from code is refused too, the shell not asked.
    await expect(d.view.import()).rejects.toMatchObject({
      code: 'STORE',
      message: `Busy: ${IMPORT_WORK} is running; ${IMPORT_WORK} can start once it ends.`,
    });
    expect(d.asked.count).toBe(1);
    turnEnds();
    await turn;
    await done;
    expect(d.result()).toEqual(['done', 'Imported boat.jsonl (merge). The store now holds 2 memories.']);
    expect([d.work.running, d.encryptButton(), d.importButton()]).toEqual([undefined, free, free]);

    // A bad file: refused (nothing written), released.
    await d.view.import();
    expect(d.result()[0]).toBe('failed');
    expect([d.work.running, d.encryptButton(), d.importButton()]).toEqual([undefined, free, free]);
    expect(d.errors.splice(0)).toMatchObject([{ code: 'IMPORT' }]);

    // An encrypted file: nothing held while its passphrase is asked; a wrong one is refused, released.
    await d.view.import();
    expect(d.el('import-unlock-form').hidden).toBe(false);
    expect([d.work.running, d.encryptButton()]).toEqual([undefined, free]);
    (d.el('import-passphrase') as HTMLInputElement).value = 'not the passphrase';
    (d.el('import-unlock-form') as HTMLFormElement).requestSubmit();
    expect(d.work.running).toBe(IMPORT_WORK);
    await expect.poll(() => d.result()[0]).toBe('failed');
    expect(d.result()[1]).toBe('That passphrase does not open the file; nothing was changed. Try again.');
    expect([d.work.running, d.encryptButton(), d.unlockButton()]).toEqual([undefined, free, free]);
    // While a re-embed runs, the file's Import is disabled with why, and a submit anyway starts nothing.
    const reembed = d.work.begin(REEMBED_WORK);
    const importWhy = `Busy: ${REEMBED_WORK} is running; ${IMPORT_WORK} can start once it ends.`;
    expect(d.unlockButton()).toEqual([true, importWhy, importWhy]);
    (d.el('import-passphrase') as HTMLInputElement).value = SEALED;
    (d.el('import-unlock-form') as HTMLFormElement).requestSubmit();
    await expect.poll(() => d.errors.length).toBe(1);
    expect(d.errors.splice(0)).toMatchObject([{ code: 'STORE', message: importWhy }]);
    expect([d.work.running, d.result()[0]]).toEqual([REEMBED_WORK, 'failed']);
    reembed();
    expect(d.unlockButton()).toEqual(free);
    (d.el('import-unlock-form') as HTMLFormElement).requestSubmit();
    await expect
      .poll(() => d.result())
      .toEqual(['done', 'Imported sealed.engram (merge). The store now holds 3 memories.']);
    expect([d.work.running, d.encryptButton()]).toEqual([undefined, free]);

    // Cancelled (while it waits for a chat turn): nothing written, released.
    let secondEnds!: () => void;
    const second = d.ctx.gate.use('a chat turn', () => new Promise<void>((resolve) => (secondEnds = resolve)));
    const cancelled = d.view.import();
    await expect.poll(() => d.work.running).toBe(IMPORT_WORK);
    d.el('transfer-cancel').click();
    secondEnds();
    await second;
    await cancelled;
    expect(d.result()).toEqual(['cancelled', 'Cancelled; nothing was changed.']);
    expect([d.work.running, d.encryptButton(), d.importButton()]).toEqual([undefined, free, free]);

    // A file the shell refused: nothing started, nothing held.
    await d.view.import();
    expect(d.result()).toEqual(['failed', 'VALIDATION: file: is too large']);
    expect([d.work.running, d.encryptButton(), d.importButton()]).toEqual([undefined, free, free]);
    expect(d.errors.splice(0)).toMatchObject([{ code: 'VALIDATION' }]);
    expect((await d.ctx.engram.getAll()).total).toBe(3);
    opened.push(d.ctx.engram);
  });
});
