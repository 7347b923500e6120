// The Status view's change of how the desktop store unlocks (desktop/renderer/store-key-change.ts) in
// Node over fake-indexeddb, with engram's real KDF: a new passphrase, a wrong current one, a refused
// form, and the moves between the keychain's key and a passphrase, while the app's engram stays open.
import { describe, expect, it, vi } from 'vitest';
import { HashEmbedder } from '../../../lib/embed/hash-embedder.js';
import { Engram, type AtRestEncryption } from '../../../lib/index.js';
import { AT_REST_KEY } from '../../../lib/store/at-rest-key.js';
import { EngramDb } from '../../../lib/store/schema.js';
import {
  CHOSEN_PASSPHRASE,
  changeUnlock,
  unlockChangeProblem,
  type UnlockChange,
  type UnlockChangeStep,
} from '../../../desktop/renderer/store-key-change.js';
import type { StoreProtection } from '../../../desktop/renderer/store-unlock.js';

const OLD = 'lantern orchard quietly';
const NEW = 'heron pebble saffron';
const AS_PASSPHRASE: StoreProtection = { kind: 'passphrase', reason: 'no keyring' };
const AS_KEYCHAIN: StoreProtection = { kind: 'keychain' };

const unique = (p: string): string => `${p}-${Math.random().toString(36).slice(2)}`;
const opening = (name: string, encryption: AtRestEncryption): Promise<Engram> =>
  Engram.open({ name, embedder: new HashEmbedder({ dimensions: 32 }), encryption });
const newKey = (): Promise<CryptoKey> =>
  crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);

/** The store's key header as stored (the one row in clear). */
async function header(name: string): Promise<unknown> {
  const db = new EngramDb(name);
  await db.open();
  try {
    return (await db.table('meta').get(AT_REST_KEY)) as unknown;
  } finally {
    db.close();
  }
}

/** The app's store: open with `encryption`, two memories in it; the instance is left open, as the app holds it. */
async function appStore(encryption: AtRestEncryption): Promise<{ name: string; engram: Engram }> {
  const name = unique('desktop-rekey');
  const engram = await opening(name, encryption);
  await engram.add('The spare key hides under the blue flowerpot', { userId: 'ana' });
  await engram.add('The boat is moored at pier seven', { userId: 'ana' });
  return { name, engram };
}

async function texts(name: string, encryption: AtRestEncryption): Promise<string[]> {
  const engram = await opening(name, encryption);
  try {
    return (await engram.getAll({ userId: 'ana' })).results.map((m) => m.memory).sort();
  } finally {
    await engram.close();
  }
}

const unreachable = (): Promise<CryptoKey> => Promise.reject(new TypeError('the keychain must not be asked'));

describe('changeUnlock()', () => {
  it('changeUnlock() new-passphrase: the old passphrase is refused, the new one opens every memory; the open engram kept working', async () => {
    const { name, engram } = await appStore({ passphrase: OLD });
    const steps: UnlockChangeStep[] = [];
    const changed = await changeUnlock(
      { kind: 'new-passphrase', current: OLD, next: NEW, confirm: NEW },
      {
        dbName: name,
        encryption: { passphrase: OLD },
        protection: AS_PASSPHRASE,
        keychainKey: unreachable,
        onStep: (s) => steps.push(s),
      },
    );
    expect(steps).toEqual(['changing', 'verifying']);
    expect(changed).toEqual({ encryption: { passphrase: NEW }, protection: AS_PASSPHRASE });
    // The app's instance was never closed: it reads and writes on.
    expect(engram.closed).toBe(false);
    await engram.add('Written after the change', { userId: 'ana' });
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(3);
    await engram.close();
    await expect(opening(name, { passphrase: OLD })).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    expect(await texts(name, changed.encryption)).toEqual([
      'The boat is moored at pier seven',
      'The spare key hides under the blue flowerpot',
      'Written after the change',
    ]);
  });

  it('changeUnlock() with a wrong current passphrase is a KeyError wrong-key and writes nothing: the old one still opens', async () => {
    const { name, engram } = await appStore({ passphrase: OLD });
    const before = await header(name);
    const steps: UnlockChangeStep[] = [];
    await expect(
      changeUnlock(
        { kind: 'new-passphrase', current: 'not the passphrase', next: NEW, confirm: NEW },
        {
          dbName: name,
          encryption: { passphrase: OLD },
          protection: AS_PASSPHRASE,
          keychainKey: unreachable,
          onStep: (s) => steps.push(s),
        },
      ),
    ).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    expect(steps).toEqual(['changing']);
    expect(await header(name)).toEqual(before);
    expect((await engram.getAll({ userId: 'ana' })).total).toBe(2);
    await engram.close();
    await expect(opening(name, { passphrase: NEW })).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    expect((await texts(name, { passphrase: OLD })).length).toBe(2);
  });

  it('changeUnlock() refuses a form unlockChangeProblem() refuses with a ValidationError before anything runs', async () => {
    const { name, engram } = await appStore({ passphrase: OLD });
    const before = await header(name);
    const keychainKey = vi.fn(unreachable);
    const refused: [UnlockChange, StoreProtection, RegExp][] = [
      [{ kind: 'new-passphrase', current: OLD, next: NEW, confirm: `${NEW}!` }, AS_PASSPHRASE, /differ/],
      [{ kind: 'new-passphrase', current: OLD, next: 'short', confirm: 'short' }, AS_PASSPHRASE, /at least 8/],
      [
        { kind: 'new-passphrase', current: OLD, next: 'x'.repeat(1025), confirm: 'x'.repeat(1025) },
        AS_PASSPHRASE,
        /at most 1024/,
      ],
      [{ kind: 'new-passphrase', current: '', next: NEW, confirm: NEW }, AS_PASSPHRASE, /Type the current/],
      [{ kind: 'new-passphrase', current: OLD, next: OLD, confirm: OLD }, AS_PASSPHRASE, /is the current one/],
      [{ kind: 'new-passphrase', current: OLD, next: NEW, confirm: NEW }, AS_KEYCHAIN, /OS keychain’s key/],
      [{ kind: 'to-passphrase', next: NEW, confirm: NEW }, AS_PASSPHRASE, /already opens with a passphrase/],
      [{ kind: 'to-passphrase', next: NEW, confirm: OLD }, AS_KEYCHAIN, /differ/],
      [{ kind: 'to-keychain', current: OLD }, { kind: 'plain', reason: 'old' }, /not encrypted/],
    ];
    for (const [change, protection, message] of refused) {
      expect(unlockChangeProblem(change, protection)).toMatch(message);
      await expect(
        changeUnlock(change, { dbName: name, encryption: { passphrase: OLD }, protection, keychainKey }),
      ).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(message) as unknown });
    }
    expect(unlockChangeProblem({ kind: 'new-passphrase', current: OLD, next: NEW, confirm: NEW }, AS_PASSPHRASE)).toBe(
      undefined,
    );
    expect(keychainKey).not.toHaveBeenCalled();
    expect(await header(name)).toEqual(before);
    await engram.close();
    expect((await texts(name, { passphrase: OLD })).length).toBe(2);
  });

  it('changeUnlock() moves a keychain store to a passphrase and back to the keychain key', async () => {
    const key = await newKey();
    const { name, engram } = await appStore({ key });
    const toPassphrase = await changeUnlock(
      { kind: 'to-passphrase', next: NEW, confirm: NEW },
      { dbName: name, encryption: { key }, protection: AS_KEYCHAIN, keychainKey: unreachable },
    );
    expect(toPassphrase).toEqual({
      encryption: { passphrase: NEW },
      protection: { kind: 'passphrase', reason: CHOSEN_PASSPHRASE },
    });
    await expect(opening(name, { key })).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    expect((await texts(name, { passphrase: NEW })).length).toBe(2);

    // Back: a wrong current passphrase first (nothing written, the keychain not asked), then the right one.
    const keychainKey = vi.fn(() => Promise.resolve(key));
    const options = { dbName: name, encryption: toPassphrase.encryption, protection: toPassphrase.protection };
    await expect(
      changeUnlock({ kind: 'to-keychain', current: 'not the passphrase' }, { ...options, keychainKey }),
    ).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    expect((await texts(name, { passphrase: NEW })).length).toBe(2);
    const toKeychain = await changeUnlock({ kind: 'to-keychain', current: NEW }, { ...options, keychainKey });
    expect(toKeychain).toEqual({ encryption: { key }, protection: AS_KEYCHAIN });
    await expect(opening(name, { passphrase: NEW })).rejects.toMatchObject({ name: 'KeyError', reason: 'wrong-key' });
    await engram.add('Written across both moves', { userId: 'ana' });
    await engram.close();
    expect((await texts(name, { key })).length).toBe(3);
  });

  it('changeUnlock() to-keychain when the keychain gives no key: that failure, and the store untouched', async () => {
    const { name, engram } = await appStore({ passphrase: OLD });
    const before = await header(name);
    const noKeychain = (): Promise<CryptoKey> => Promise.reject(new TypeError('no keyring'));
    await expect(
      changeUnlock(
        { kind: 'to-keychain', current: OLD },
        { dbName: name, encryption: { passphrase: OLD }, protection: AS_PASSPHRASE, keychainKey: noKeychain },
      ),
    ).rejects.toThrow('no keyring');
    expect(await header(name)).toEqual(before);
    await engram.close();
    expect((await texts(name, { passphrase: OLD })).length).toBe(2);
  });
});
