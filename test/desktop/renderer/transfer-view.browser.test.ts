// The desktop's import (desktop/renderer/transfer-view.ts) against a change of the store's key, in real
// Chromium IndexedDB: an import asked while the key change runs waits for it (and says so), then closes
// the store and reopens it with the new passphrase, the one every opening passes from then on; nothing is
// lost and the store opens with the new passphrase only. Hash embedders stand in for the models.
import { afterEach, expect, it } from 'vitest';
import { Engram, HashEmbedder, type AtRestEncryption } from '../../../lib/index.js';
import type { AppContext } from '../../../desktop/renderer/app-context.js';
import { StoreGate } from '../../../ui/store-gate.js';
import { changeUnlock } from '../../../desktop/renderer/store-key-change.js';
import { TransferView, type OpenOptions } from '../../../desktop/renderer/transfer-view.js';
import type { DesktopBridge } from '../../../desktop/preload/bridge-api.js';

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
  const ctx: AppContext = {
    engram,
    bridge,
    dbName: name,
    protection: { kind: 'passphrase', reason: 'a test' },
    gate: new StoreGate(),
    navigate: () => undefined,
    openMemory: () => undefined,
    showError: (e) => {
      throw e;
    },
    notify: () => undefined,
    changed: () => undefined,
  };
  const view = new TransferView(ctx, openOptions);
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
