// The store's at-rest key in the OS keychain, through the main process's IPC
// (startDesktop with the injected Electron surface): made once with a usable
// keychain and kept only as safeStorage ciphertext; refused, with nothing made
// or written, on the basic_text backend or without OS encryption; a key that
// cannot be read is reported and never replaced; the renderer's secret calls
// cannot reach it.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDesktop } from '../../../desktop/main/desktop-app.js';
import { SECRETS_FILE, STORE_KEY_SECRET } from '../../../desktop/main/secret-store.js';
import {
  CHANNELS,
  STORE_KEY_BYTES,
  type BridgeResult,
  type StoreKeyAnswer,
} from '../../../desktop/preload/bridge-api.js';
import { fakeElectron, type FakeElectron } from './fake-electron.js';

const APP_FRAME = { senderFrame: { url: 'app://engram/index.html' } };

let dir: string;
let electron: FakeElectron;

async function start(platform = 'linux'): Promise<void> {
  electron = fakeElectron({ userData: join(dir, 'user-data') });
  const app = startDesktop(electron, { renderer: dir, preload: join(dir, 'p.cjs') }, platform);
  electron.app.ready();
  await app.started;
}

async function storeKey(frame: { senderFrame: { url: string } | null } = APP_FRAME): Promise<StoreKeyAnswer> {
  const answer = (await electron.handlers.get(CHANNELS.storeKey)!(frame)) as BridgeResult<StoreKeyAnswer>;
  if (!answer.ok) throw new TypeError(`storeKey failed: ${answer.error.message}`);
  return answer.value;
}

async function keyBytes(): Promise<Uint8Array> {
  const answer = await storeKey();
  if (answer.kind !== 'key') throw new TypeError(`no key: ${answer.reason}`);
  return answer.key;
}

async function secretsOnDisk(): Promise<Record<string, string>> {
  return JSON.parse(await readFile(join(dir, 'user-data/secrets', SECRETS_FILE), 'utf8')) as Record<string, string>;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-store-key-'));
  await start();
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('storeKey (the store key in the OS keychain)', () => {
  it('storeKey() makes a random 32-byte key once, keeps it only as keychain ciphertext, and hands the same key after a restart', async () => {
    const first = await keyBytes();
    expect(first).toBeInstanceOf(Uint8Array);
    expect(first.length).toBe(STORE_KEY_BYTES);
    expect(new Set(first).size).toBeGreaterThan(8);
    const again = await keyBytes();
    expect(Buffer.from(again).equals(Buffer.from(first))).toBe(true);
    // Each answer is a copy: wiping it (as the renderer does) leaves the kept key whole.
    again.fill(0);
    expect(Buffer.from(await keyBytes()).equals(Buffer.from(first))).toBe(true);

    const onDisk = await secretsOnDisk();
    expect(Object.keys(onDisk)).toEqual([STORE_KEY_SECRET]);
    const raw = await readFile(join(dir, 'user-data/secrets', SECRETS_FILE), 'utf8');
    expect(raw).not.toContain(Buffer.from(first).toString('base64'));
    expect(raw).not.toContain(Buffer.from(first).toString('hex'));
    expect(electron.safeStorage.calls).toContain('encrypt');

    await start();
    expect(Buffer.from(await keyBytes()).equals(Buffer.from(first))).toBe(true);
  });

  it('storeKey() called twice at once makes one key', async () => {
    const [a, b] = await Promise.all([keyBytes(), keyBytes()]);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    expect(electron.safeStorage.calls.filter((c) => c === 'encrypt')).toHaveLength(1);
  });

  it('storeKey() with a keychain on macOS and Windows (no backend to ask) keeps the key', async () => {
    for (const platform of ['darwin', 'win32']) {
      await rm(join(dir, 'user-data'), { recursive: true, force: true });
      await start(platform);
      expect((await storeKey()).kind).toBe('key');
      expect(electron.safeStorage.calls).not.toContain('backend');
    }
  });

  it('storeKey() on Linux without a keyring (basic_text) makes no key, writes nothing and says why', async () => {
    electron.safeStorage.backend = 'basic_text';
    const answer = await storeKey();
    expect(answer).toEqual({ kind: 'unavailable', reason: expect.stringMatching(/no keyring.*basic_text/) as string });
    expect(electron.safeStorage.calls).not.toContain('encrypt');
    await expect(readdir(join(dir, 'user-data/secrets'))).rejects.toMatchObject({ code: 'ENOENT' });
    // Not a session key either: a later call with a keyring makes the first key.
    electron.safeStorage.backend = 'gnome_libsecret';
    expect((await storeKey()).kind).toBe('key');
  });

  it('storeKey() without OS encryption makes no key and writes nothing', async () => {
    electron.safeStorage.available = false;
    expect(await storeKey()).toEqual({
      kind: 'unavailable',
      reason: expect.stringContaining('safeStorage is unavailable') as string,
    });
    await expect(readdir(join(dir, 'user-data/secrets'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('storeKey() with a keyring gone after the key was made (basic_text now) reports it and leaves the stored key alone', async () => {
    const first = await keyBytes();
    const stored = await secretsOnDisk();
    electron.safeStorage.backend = 'basic_text';
    expect((await storeKey()).kind).toBe('unavailable');
    expect(await secretsOnDisk()).toEqual(stored);
    electron.safeStorage.backend = 'kwallet6';
    expect(Buffer.from(await keyBytes()).equals(Buffer.from(first))).toBe(true);
  });

  it('storeKey() whose stored key cannot be decrypted (keychain reset) or is damaged says so and never replaces it', async () => {
    await mkdir(join(dir, 'user-data/secrets'), { recursive: true });
    const file = join(dir, 'user-data/secrets', SECRETS_FILE);
    await writeFile(
      file,
      JSON.stringify({ [STORE_KEY_SECRET]: Buffer.from('not a keychain ciphertext').toString('base64') }),
    );
    const unreadable = await storeKey();
    expect(unreadable).toEqual({
      kind: 'unavailable',
      reason: expect.stringMatching(/cannot be read.*could not be decrypted/) as string,
    });
    expect(electron.safeStorage.calls).not.toContain('encrypt');

    const short = electron.safeStorage.encryptString(Buffer.alloc(16, 7).toString('base64')).toString('base64');
    await writeFile(file, JSON.stringify({ [STORE_KEY_SECRET]: short }));
    expect(await storeKey()).toEqual({ kind: 'unavailable', reason: expect.stringContaining('damaged') as string });
    expect((await secretsOnDisk())[STORE_KEY_SECRET]).toBe(short);
  });

  it('storeKey() answers only the app page, and the renderer secret calls cannot read, set or delete the key', async () => {
    const answer = (await electron.handlers.get(CHANNELS.storeKey)!({
      senderFrame: { url: 'https://evil.example/' },
    })) as BridgeResult<StoreKeyAnswer>;
    expect(answer).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    const key = await keyBytes();
    for (const [channel, args] of [
      [CHANNELS.secretGet, [STORE_KEY_SECRET]],
      [CHANNELS.secretSet, [STORE_KEY_SECRET, 'AAAA']],
      [CHANNELS.secretDelete, [STORE_KEY_SECRET]],
    ] as const) {
      const refused = (await electron.handlers.get(channel)!(APP_FRAME, ...args)) as BridgeResult<unknown>;
      expect(refused, channel).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
    expect(Buffer.from(await keyBytes()).equals(Buffer.from(key))).toBe(true);
    const extra = (await electron.handlers.get(CHANNELS.storeKey)!(APP_FRAME, 'x')) as BridgeResult<unknown>;
    expect(extra).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
  });
});
