// IPC handlers through the fake ipcMain: sender check, argument validation,
// dialogs for export and import, secrets through safeStorage.
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDesktop } from '../../../desktop/main/desktop-app.js';
import { SECRETS_FILE, SecretStore } from '../../../desktop/main/secret-store.js';
import { CHANNELS, MAX_SECRET_CHARS, type BridgeResult } from '../../../desktop/preload/bridge-api.js';
import { FakeWindow, fakeElectron, fakeSafeStorage, type FakeElectron } from './fake-electron.js';

const APP_FRAME = { senderFrame: { url: 'app://engram/index.html' } };

let dir: string;
let electron: FakeElectron;
let window: FakeWindow;

async function call<T>(channel: string, ...args: unknown[]): Promise<BridgeResult<T>> {
  return (await electron.handlers.get(channel)!(APP_FRAME, ...args)) as BridgeResult<T>;
}

async function failure(channel: string, ...args: unknown[]): Promise<{ code: string; message: string }> {
  const answer = await call(channel, ...args);
  if (answer.ok) throw new TypeError(`${channel} succeeded`);
  return answer.error;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-ipc-'));
  electron = fakeElectron({ userData: join(dir, 'user-data') });
  const app = startDesktop(electron, { renderer: dir, preload: join(dir, 'p.cjs') }, 'linux');
  electron.app.ready();
  await app.started;
  window = app.window()!;
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('IPC handlers', () => {
  it('registers one handler per bridge channel except the menu push', () => {
    expect([...electron.handlers.keys()].sort()).toEqual(
      Object.values(CHANNELS)
        .filter((c) => c !== CHANNELS.menuCommand && c !== CHANNELS.hubCall)
        .sort(),
    );
  });

  it('refuses calls from any frame that is not the app page, before reading arguments', async () => {
    for (const senderFrame of [
      { url: 'https://evil.example/' },
      { url: 'file:///tmp/x.html' },
      { url: 'devtools://devtools/x' },
      null,
    ]) {
      const answer = (await electron.handlers.get(CHANNELS.secretGet)!(
        { senderFrame },
        'sync-api-key',
      )) as BridgeResult<unknown>;
      expect(answer).toMatchObject({ ok: false, error: { code: 'VALIDATION', name: 'ValidationError' } });
    }
    expect(electron.safeStorage.calls).toEqual([]);
  });

  it('saveFile shows a save dialog on the window and writes the bytes where the user chose', async () => {
    const target = join(dir, 'out.jsonl');
    electron.saveAnswers.push({ canceled: false, filePath: target });
    const bytes = new TextEncoder().encode('{"type":"header"}\n');
    expect(await call(CHANNELS.saveFile, { suggestedName: 'engram-2026.jsonl', bytes })).toEqual({
      ok: true,
      value: { saved: true, location: target },
    });
    expect(await readFile(target, 'utf8')).toBe('{"type":"header"}\n');
    expect(electron.dialogCalls[0]).toMatchObject({
      kind: 'save',
      window,
      options: {
        defaultPath: 'engram-2026.jsonl',
        filters: [{ name: 'engram export', extensions: ['jsonl', 'engram'] }],
      },
    });
  });

  it('saveFile answers saved: false and writes nothing when the dialog is cancelled', async () => {
    electron.saveAnswers.push({ canceled: true });
    expect(await call(CHANNELS.saveFile, { suggestedName: 'a.jsonl', bytes: new Uint8Array([1]) })).toEqual({
      ok: true,
      value: { saved: false },
    });
    expect(await readdir(dir)).toEqual([]);
  });

  it('saveFile rejects names with folders, wrong types, extra fields and missing arguments without opening a dialog', async () => {
    const bytes = new Uint8Array([1]);
    for (const bad of [
      { suggestedName: '../../etc/passwd', bytes },
      { suggestedName: 'a\\b.jsonl', bytes },
      { suggestedName: '', bytes },
      { suggestedName: 'x'.repeat(201), bytes },
      { suggestedName: 'a.jsonl', bytes: 'not bytes' },
      { suggestedName: 'a.jsonl', bytes: [1, 2] },
      { suggestedName: 'a.jsonl', bytes, path: '/tmp/x' },
      'a.jsonl',
      null,
    ]) {
      expect((await failure(CHANNELS.saveFile, bad)).code).toBe('VALIDATION');
    }
    expect((await failure(CHANNELS.saveFile)).message).toContain('expected 1');
    expect(electron.dialogCalls).toEqual([]);
  });

  it('openFile reads the file the user picked, and answers null when cancelled', async () => {
    const source = join(dir, 'in.jsonl');
    await writeFile(source, 'line\n');
    electron.openAnswers.push({ canceled: false, filePaths: [source] });
    const answer = await call<{ name: string; bytes: Uint8Array }>(CHANNELS.openFile);
    expect(answer.ok && answer.value.name).toBe('in.jsonl');
    expect(answer.ok && new TextDecoder().decode(answer.value.bytes)).toBe('line\n');
    expect(electron.dialogCalls[0]).toMatchObject({ kind: 'open', window, options: { properties: ['openFile'] } });
    electron.openAnswers.push({ canceled: true, filePaths: [] });
    expect(await call(CHANNELS.openFile)).toEqual({ ok: true, value: null });
    expect((await failure(CHANNELS.openFile, '/etc/passwd')).code).toBe('VALIDATION');
  });

  it('openFile refuses a folder', async () => {
    electron.openAnswers.push({ canceled: false, filePaths: [dir] });
    expect(await failure(CHANNELS.openFile)).toMatchObject({ code: 'VALIDATION' });
  });

  it('dialogs answer CLOSED when no window is open', async () => {
    window.destroyed = true;
    expect((await failure(CHANNELS.openFile)).code).toBe('CLOSED');
  });

  it('secrets round-trip through safeStorage and the file on disk holds only ciphertext', async () => {
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretSet, 'sync-api-key', 'qdrant-key-123')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretSet, 'sync-passphrase', 'correct horse')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'qdrant-key-123' });
    expect(electron.safeStorage.calls.filter((c) => c !== 'backend')).toEqual(['encrypt', 'encrypt', 'decrypt']);
    const files = await readdir(join(dir, 'user-data/secrets'));
    const onDisk = await readFile(join(dir, 'user-data/secrets', files[0]!), 'utf8');
    expect(files).toEqual(['secrets.enc.json']);
    expect(onDisk).not.toContain('qdrant-key-123');
    expect(onDisk).not.toContain('correct horse');
    expect(await call(CHANNELS.secretDelete, 'sync-api-key')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-passphrase')).toEqual({ ok: true, value: 'correct horse' });
  });

  it('secrets refuse unknown names, empty or oversized values, and store nothing without OS encryption', async () => {
    expect((await failure(CHANNELS.secretGet, 'password')).code).toBe('VALIDATION');
    expect((await failure(CHANNELS.secretSet, 'sync-api-key', '')).code).toBe('VALIDATION');
    expect((await failure(CHANNELS.secretSet, 'sync-api-key', 'k'.repeat(MAX_SECRET_CHARS + 1))).code).toBe(
      'VALIDATION',
    );
    expect((await failure(CHANNELS.secretSet, 'sync-api-key', 42)).code).toBe('VALIDATION');
    expect((await failure(CHANNELS.secretSet, 'sync-api-key')).code).toBe('VALIDATION');
  });

  it('secrets are never written to disk without OS encryption: kept for the session, and appInfo says why', async () => {
    electron.safeStorage.available = false;
    expect(await call(CHANNELS.secretSet, 'sync-api-key', 'k-session')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'k-session' });
    await expect(readdir(join(dir, 'user-data/secrets'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(electron.safeStorage.calls).not.toContain('encrypt');
    expect(await call(CHANNELS.appInfo)).toMatchObject({
      ok: true,
      value: {
        secretsPersist: false,
        secretsUnprotectedReason: expect.stringContaining('safeStorage is unavailable') as string,
      },
    });
    expect(await call(CHANNELS.secretDelete, 'sync-api-key')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: null });
  });

  it('secrets on Linux without a keyring (safeStorage "available" on its basic_text backend) are never written to disk, and appInfo says they are not protected', async () => {
    electron.safeStorage.backend = 'basic_text';
    expect(electron.safeStorage.isEncryptionAvailable()).toBe(true);
    expect(await call(CHANNELS.secretSet, 'sync-api-key', 'qdrant-key-123')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretSet, 'sync-passphrase', 'correct horse')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'qdrant-key-123' });
    expect(electron.safeStorage.calls).not.toContain('encrypt');
    await expect(readdir(join(dir, 'user-data/secrets'))).rejects.toMatchObject({ code: 'ENOENT' });
    const info = await call<{ secretsPersist: boolean; secretsUnprotectedReason?: string }>(CHANNELS.appInfo);
    expect(info).toMatchObject({ ok: true, value: { secretsPersist: false } });
    expect(info.ok && info.value.secretsUnprotectedReason).toMatch(/no keyring.*basic_text/);
    for (const backend of ['unknown', 'something_new']) {
      electron.safeStorage.backend = backend;
      expect(await call(CHANNELS.appInfo)).toMatchObject({ ok: true, value: { secretsPersist: false } });
    }
    for (const backend of ['gnome_libsecret', 'kwallet', 'kwallet5', 'kwallet6']) {
      electron.safeStorage.backend = backend;
      expect(await call(CHANNELS.appInfo), backend).toEqual({
        ok: true,
        value: { shell: 'electron', version: '0.1.0-test', platform: 'linux', secretsPersist: true },
      });
    }
  });

  it('a secret set without a keyring replaces (and removes from disk) the copy stored while there was one', async () => {
    expect(await call(CHANNELS.secretSet, 'sync-api-key', 'old-key')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretSet, 'sync-passphrase', 'kept')).toEqual({ ok: true, value: null });
    electron.safeStorage.backend = 'basic_text';
    expect(await call(CHANNELS.secretSet, 'sync-api-key', 'new-key')).toEqual({ ok: true, value: null });
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'new-key' });
    const onDisk = JSON.parse(await readFile(join(dir, 'user-data/secrets', SECRETS_FILE), 'utf8')) as Record<
      string,
      string
    >;
    expect(Object.keys(onDisk)).toEqual(['sync-passphrase']);
  });

  it('a secret an older version wrote with basic_text is read once, then kept in memory and removed from disk', async () => {
    electron.safeStorage.backend = 'basic_text';
    const secretsDir = join(dir, 'user-data/secrets');
    await mkdir(secretsDir, { recursive: true });
    const weak = electron.safeStorage.encryptString('written-by-basic-text').toString('base64');
    await writeFile(join(secretsDir, SECRETS_FILE), JSON.stringify({ 'sync-api-key': weak, 'sync-passphrase': weak }));
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'written-by-basic-text' });
    expect(Object.keys(JSON.parse(await readFile(join(secretsDir, SECRETS_FILE), 'utf8')) as object)).toEqual([
      'sync-passphrase',
    ]);
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'written-by-basic-text' });
    expect(await call(CHANNELS.secretGet, 'sync-passphrase')).toEqual({ ok: true, value: 'written-by-basic-text' });
    expect(JSON.parse(await readFile(join(secretsDir, SECRETS_FILE), 'utf8'))).toEqual({});
  });

  it('the keyring backend is asked on Linux only (elsewhere safeStorage has no such function)', async () => {
    const safeStorage = fakeSafeStorage();
    safeStorage.backend = 'basic_text';
    for (const platform of ['darwin', 'win32']) {
      const store = new SecretStore(safeStorage, join(dir, platform), platform);
      expect(store.persists()).toBe(true);
      await store.set('sync-api-key', 'k');
      expect(await store.get('sync-api-key')).toBe('k');
    }
    expect(safeStorage.calls).not.toContain('backend');
    expect(new SecretStore(safeStorage, join(dir, 'linux'), 'linux').persists()).toBe(false);
  });

  it('the secrets file is written with mode 0600 even over a temporary file a crash left with mode 0644, or as a link', async () => {
    const secretsDir = join(dir, 'user-data/secrets');
    await mkdir(secretsDir, { recursive: true });
    const temp = join(secretsDir, `${SECRETS_FILE}.tmp`);
    await writeFile(temp, '{}', { mode: 0o644 });
    await chmod(temp, 0o644);
    expect(await call(CHANNELS.secretSet, 'sync-api-key', 'k1')).toEqual({ ok: true, value: null });
    expect((await stat(join(secretsDir, SECRETS_FILE))).mode & 0o777).toBe(0o600);
    expect(await readdir(secretsDir)).toEqual([SECRETS_FILE]);

    // A stale temporary name that is a link: the link is replaced, what it points to is never written.
    const target = join(dir, 'elsewhere.json');
    await writeFile(target, 'untouched', { mode: 0o644 });
    await symlink(target, temp);
    expect(await call(CHANNELS.secretSet, 'sync-passphrase', 'p1')).toEqual({ ok: true, value: null });
    expect(await readFile(target, 'utf8')).toBe('untouched');
    expect((await stat(join(secretsDir, SECRETS_FILE))).mode & 0o777).toBe(0o600);
    expect(await call(CHANNELS.secretGet, 'sync-api-key')).toEqual({ ok: true, value: 'k1' });
  });

  it('syncServer opens the network to that one origin (https, or http on loopback) and closes it with null', async () => {
    const session = electron.session.defaultSession;
    const decide = (url: string): { cancel?: boolean } => {
      let answer: { cancel?: boolean } = {};
      session.beforeRequest?.({ url }, (r) => (answer = r));
      return answer;
    };
    expect(decide('https://qdrant.example.net:6333/collections/engram')).toEqual({ cancel: true });
    electron.messageAnswers.push(0, 0);
    expect(await call(CHANNELS.syncServer, 'https://qdrant.example.net:6333/some/path')).toEqual({
      ok: true,
      value: null,
    });
    expect(decide('https://qdrant.example.net:6333/collections/engram')).toEqual({});
    expect(decide('https://qdrant.example.net:6334/collections/engram')).toEqual({ cancel: true });
    expect(decide('https://qdrant.example.net.evil.com:6333/')).toEqual({ cancel: true });
    expect(decide('https://cdn.example.com/x.js')).toEqual({ cancel: true });
    expect(await call(CHANNELS.syncServer, 'http://127.0.0.1:6333')).toEqual({ ok: true, value: null });
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({});
    expect(decide('https://qdrant.example.net:6333/collections/engram')).toEqual({ cancel: true });
    for (const bad of [
      'http://qdrant.example.net:6333',
      'https://user:pw@qdrant.example.net',
      'ftp://127.0.0.1',
      'file:///etc',
      'not a url',
      42,
      undefined,
    ]) {
      expect((await failure(CHANNELS.syncServer, bad)).code).toBe('VALIDATION');
    }
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({});
    expect(await call(CHANNELS.syncServer, null)).toEqual({ ok: true, value: null });
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({ cancel: true });
  });

  it('syncServer opens nothing until the user allows the origin in a main-process dialog; refused, the renderer gets an AbortError', async () => {
    const session = electron.session.defaultSession;
    const decide = (url: string): { cancel?: boolean } => {
      let answer: { cancel?: boolean } = {};
      session.beforeRequest?.({ url }, (r) => (answer = r));
      return answer;
    };
    // Refused (the default button, and what Escape gives): the filter stays closed.
    electron.messageAnswers.push(1);
    expect(await failure(CHANNELS.syncServer, 'https://attacker.example/collect')).toMatchObject({
      code: 'ABORTED',
      message: expect.stringContaining('https://attacker.example') as string,
    });
    expect(electron.dialogCalls).toHaveLength(1);
    expect(electron.dialogCalls[0]).toMatchObject({
      kind: 'message',
      window,
      options: { message: 'Let engram connect to https://attacker.example?' },
    });
    expect(decide('https://attacker.example/collect')).toEqual({ cancel: true });
    // No answer queued: the fake answers the cancel button, as Escape does.
    expect((await failure(CHANNELS.syncServer, 'http://127.0.0.1:8080/admin')).code).toBe('ABORTED');
    expect(decide('http://127.0.0.1:8080/admin')).toEqual({ cancel: true });

    // Allowed: open, and the same origin is not asked again this session.
    electron.messageAnswers.push(0);
    expect(await call(CHANNELS.syncServer, 'http://127.0.0.1:6333')).toEqual({ ok: true, value: null });
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({});
    expect(await call(CHANNELS.syncServer, 'http://127.0.0.1:6333/other')).toEqual({ ok: true, value: null });
    expect(electron.dialogCalls).toHaveLength(3);

    // Another origin refused: nothing changes, the allowed one stays open and the new one blocked.
    electron.messageAnswers.push(1);
    expect((await failure(CHANNELS.syncServer, 'https://qdrant.example.net')).code).toBe('ABORTED');
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({});
    expect(decide('https://qdrant.example.net/collections')).toEqual({ cancel: true });

    // Closed with null (no dialog), reopened without asking again.
    expect(await call(CHANNELS.syncServer, null)).toEqual({ ok: true, value: null });
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({ cancel: true });
    expect(await call(CHANNELS.syncServer, 'http://127.0.0.1:6333')).toEqual({ ok: true, value: null });
    expect(electron.dialogCalls).toHaveLength(4);
  });

  it('modelServer opens the filter to the chat model server the user allowed, apart from the sync server, and closes it with null', async () => {
    const session = electron.session.defaultSession;
    const decide = (url: string): { cancel?: boolean } => {
      let answer: { cancel?: boolean } = {};
      session.beforeRequest?.({ url }, (r) => (answer = r));
      return answer;
    };
    const ollama = 'http://127.0.0.1:11434/v1/chat/completions';
    expect(decide(ollama)).toEqual({ cancel: true });
    // Refused in the dialog: nothing opens, and the renderer hears why.
    electron.messageAnswers.push(1);
    expect(await failure(CHANNELS.modelServer, 'http://127.0.0.1:11434/v1')).toMatchObject({
      code: 'ABORTED',
      message: expect.stringContaining('the model server stays blocked') as string,
    });
    expect(electron.dialogCalls.at(-1)).toMatchObject({
      kind: 'message',
      options: { message: 'Let the chat use the model server at http://127.0.0.1:11434?' },
    });
    expect(decide(ollama)).toEqual({ cancel: true });
    electron.messageAnswers.push(0);
    expect(await call(CHANNELS.modelServer, 'http://127.0.0.1:11434/v1')).toEqual({ ok: true, value: null });
    expect(decide(ollama)).toEqual({});
    expect(decide('http://127.0.0.1:11434/api/tags')).toEqual({});
    expect(decide('http://127.0.0.1:11435/v1/models')).toEqual({ cancel: true });
    expect(decide('https://api.openai.com/v1/chat/completions')).toEqual({ cancel: true });
    // The sync server is its own origin: opening it leaves the model server open, and the other way round.
    electron.messageAnswers.push(0);
    expect(await call(CHANNELS.syncServer, 'http://127.0.0.1:6333')).toEqual({ ok: true, value: null });
    expect(decide(ollama)).toEqual({});
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({});
    for (const bad of [
      'http://192.168.1.20:11434/v1',
      'https://user:pw@models.example.net/v1',
      'ftp://127.0.0.1/v1',
      'javascript:alert(1)',
      `https://${'a'.repeat(3000)}.example/v1`,
      42,
      { url: 'http://127.0.0.1:11434' },
    ]) {
      expect((await failure(CHANNELS.modelServer, bad)).code).toBe('VALIDATION');
    }
    expect(await call(CHANNELS.modelServer, null)).toEqual({ ok: true, value: null });
    expect(decide(ollama)).toEqual({ cancel: true });
    expect(decide('http://127.0.0.1:6333/collections')).toEqual({});
  });

  it('syncServer asks once for two quick calls for one origin, and without a window opens nothing', async () => {
    let answer!: (response: { response: number }) => void;
    const asked: string[] = [];
    electron.dialog.showMessageBox = (_window, options) => {
      asked.push(options.message);
      return new Promise((resolve) => (answer = resolve));
    };
    const first = call(CHANNELS.syncServer, 'https://qdrant.example.net/a');
    const second = call(CHANNELS.syncServer, 'https://qdrant.example.net/b');
    await new Promise((r) => setTimeout(r, 0));
    expect(asked).toEqual(['Let engram connect to https://qdrant.example.net?']);
    answer({ response: 0 });
    // The first call was superseded by the second while the dialog was up; the second opens the origin.
    expect(await first).toMatchObject({ ok: false, error: { code: 'ABORTED' } });
    expect(await second).toEqual({ ok: true, value: null });

    const session = electron.session.defaultSession;
    let decided: { cancel?: boolean } = {};
    session.beforeRequest?.({ url: 'https://other.example/' }, (r) => (decided = r));
    expect(decided).toEqual({ cancel: true });
    window.destroyed = true;
    expect((await failure(CHANNELS.syncServer, 'https://other.example')).code).toBe('CLOSED');
    session.beforeRequest?.({ url: 'https://other.example/' }, (r) => (decided = r));
    expect(decided).toEqual({ cancel: true });
  });

  it('appInfo reports the shell, version and whether secrets persist', async () => {
    expect(await call(CHANNELS.appInfo)).toEqual({
      ok: true,
      value: { shell: 'electron', version: '0.1.0-test', platform: 'linux', secretsPersist: true },
    });
  });
});
