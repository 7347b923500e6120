// Getting Electron's binary: `npm run desktop:electron` runs the electron
// package's installer and, when the download fails, says what failed and what
// to try, exits 1 and installs nothing; `npm start` names that command when the
// binary is missing. Nothing leaves this machine: the download goes to a local
// server standing in for Electron's mirror (answering 404).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const { version } = require('electron/package.json') as { version: string };

/** Whether this machine has the binary (the electron package's main export is its path, and throws without it). */
function binaryInstalled(): boolean {
  try {
    return existsSync(require('electron') as string);
  } catch {
    return false;
  }
}
const installed = binaryInstalled();
let mirror: Server;
let mirrorUrl: string;
const asked: string[] = [];
let cache: string;

/** This process's environment without any Electron download setting of the machine running the tests. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/electron/i.test(key)));
  return { ...env, ELECTRON_GET_NO_PROGRESS: '1', electron_config_cache: cache, ...extra };
}

/** Runs a script to its end (or, with `until`, until its output matches, then stops its process group). */
function runScript(
  script: string,
  env: NodeJS.ProcessEnv,
  until?: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [resolve(ROOT, script)], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (until?.test(stdout) === true && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('exit', (code) => {
      done({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  cache = await mkdtemp(join(tmpdir(), 'engram-electron-cache-'));
  mirror = createServer((request, response) => {
    asked.push(request.url ?? '');
    response.writeHead(404).end('not here');
  });
  await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
  mirrorUrl = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((r) => mirror.close(r));
  await rm(cache, { recursive: true, force: true });
});

describe('npm run desktop:electron', () => {
  it('is a script of package.json', async () => {
    const manifest = JSON.parse(await readFile(resolve(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts['desktop:electron']).toBe('node scripts/get-electron.mjs');
  });

  it.skipIf(installed)(
    'says plainly why the download failed and what to try, exits 1 and installs nothing',
    async () => {
      const { code, stdout, stderr } = await runScript(
        'scripts/get-electron.mjs',
        cleanEnv({ ELECTRON_MIRROR: mirrorUrl }),
      );
      expect(code).toBe(1);
      expect(stdout).toContain(
        `Downloading Electron ${version} for ${process.platform}-${process.arch} from ${mirrorUrl}`,
      );
      // The electron package's own installer asked the mirror for this version's archive.
      expect(asked).toContain(`/v${version}/electron-v${version}-${process.platform}-${process.arch}.zip`);
      expect(stderr).toContain(
        `engram: Electron's binary was not installed: the download from ${mirrorUrl} failed (HTTPError: Response code 404 (Not Found)`,
      );
      expect(stderr).toContain('ELECTRON_MIRROR=');
      expect(stderr).toContain('Then run `npm run desktop:electron` again.');
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(binaryInstalled()).toBe(false);
      expect(existsSync(resolve(ROOT, 'node_modules/electron/path.txt'))).toBe(false);
    },
    60_000,
  );

  it.skipIf(installed)(
    'says when the address cannot be reached at all',
    async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const { code, stderr } = await runScript(
        'scripts/get-electron.mjs',
        cleanEnv({ ELECTRON_MIRROR: `http://127.0.0.1:${port}/` }),
      );
      expect(code).toBe(1);
      expect(stderr).toContain('fetch failed: the address could not be reached');
    },
    60_000,
  );

  it.skipIf(installed)(
    'refuses at once when ELECTRON_SKIP_BINARY_DOWNLOAD is set, naming it',
    async () => {
      const before = asked.length;
      const { code, stderr } = await runScript(
        'scripts/get-electron.mjs',
        cleanEnv({ ELECTRON_MIRROR: mirrorUrl, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' }),
      );
      expect(code).toBe(1);
      expect(stderr).toContain('ELECTRON_SKIP_BINARY_DOWNLOAD is set');
      expect(asked.length).toBe(before);
    },
    60_000,
  );
});

describe('npm start without the binary', () => {
  it.skipIf(installed)(
    'names the command that fetches it, then serves the app in the browser',
    async () => {
      const { stdout } = await runScript('scripts/start.mjs', cleanEnv({}), /desktop:electron/);
      expect(stdout.split('\n')[0]).toBe(
        "Electron's binary is not installed (`npm install` does not download it: install scripts are off). `npm run desktop:electron` fetches it; meanwhile the same app is served in your browser.",
      );
    },
    60_000,
  );
});
