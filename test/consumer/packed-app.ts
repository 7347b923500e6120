/**
 * Helpers of the consumer test: run a command with a bounded time, pack the
 * library, and make a fixture app from test/consumer/fixtures/ in a folder
 * outside the repository with the packed tarball installed, as a user would.
 * Node side only.
 */
import { spawn } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** What a finished command printed, and its exit code. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The environment for commands run in a fixture app: this process's, without
 * what `npm test` and Vitest put there (npm_* settings such as the repository's
 * prefix, NODE_ENV=test), so that npm and Vite behave as in a fresh shell.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const k = key.toLowerCase();
    if (k.startsWith('npm_') || k === 'init_cwd' || k === 'node_env' || k.startsWith('vitest') || k === 'node_options')
      continue;
    env[key] = value;
  }
  return env;
}

/**
 * Runs `command args` in `cwd` and resolves with its output whatever its exit
 * code; the command is killed (and the promise rejects) after `timeoutMs`.
 */
export function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<RunResult> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new RangeError(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** A long-running command, such as a dev server. */
export interface Started {
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves when it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Starts `command args` in `cwd` (same environment as {@link run}) and leaves it running. */
export function start(command: string, args: readonly string[], cwd: string): Started {
  const child = spawn(command, args, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => {
    child.once('exit', () => {
      done();
    });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    output: () => output,
    stop: async () => {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (running()) child.kill('SIGKILL');
      }, 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Like {@link run}, but rejects with the output when the exit code is not 0. */
export async function runOk(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<RunResult> {
  const result = await run(command, args, cwd, timeoutMs);
  if (result.code !== 0) {
    throw new RangeError(
      `${command} ${args.join(' ')} exited with ${String(result.code)} in ${cwd}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

/** The packed library: the tarball's path, the files it holds, and the files its package.json points at. */
export interface Packed {
  tarball: string;
  files: string[];
  /** Every path in `exports` (all conditions) and `bin`, without the leading './'. */
  entryPoints: string[];
}

/** The file paths in an `exports` or `bin` value, however nested. */
function targets(value: unknown): string[] {
  if (typeof value === 'string') return [value.replace(/^\.\//, '')];
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(targets);
  return [];
}

/** `npm pack` of the repository (which must be built) into `destination`. */
export async function packLibrary(destination: string): Promise<Packed> {
  const { stdout } = await runOk(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    ROOT,
    60_000,
  );
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (info === undefined) throw new RangeError(`npm pack printed no package: ${stdout}`);
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { exports?: unknown; bin?: unknown };
  return {
    tarball: join(destination, info.filename),
    files: info.files.map((f) => f.path),
    entryPoints: [...targets(pkg.exports), ...targets(pkg.bin)],
  };
}

/** The version of a dependency of this repository, so a fixture installs what the npm cache holds. */
export async function repoVersion(name: string): Promise<string> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const version = pkg.devDependencies?.[name] ?? pkg.dependencies?.[name];
  if (version === undefined) throw new RangeError(`${name} is not a dependency of the repository`);
  return version;
}

/**
 * Copies the fixture `name` to `parent/name` and installs the tarball and
 * `packages` there, with install scripts off. From the npm cache alone when it
 * can (`--offline`), else from the registry, preferring the cache.
 * @returns the app's folder and how the install went
 */
export async function createApp(
  parent: string,
  name: string,
  tarball: string,
  packages: readonly string[],
): Promise<{ dir: string; install: RunResult; offline: boolean }> {
  const dir = join(parent, name);
  await cp(join(import.meta.dirname, 'fixtures', name), dir, { recursive: true });
  const args = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', tarball, ...packages];
  const offline = await run('npm', [...args, '--offline'], dir, 180_000);
  if (offline.code === 0) return { dir, install: offline, offline: true };
  const online = await runOk('npm', [...args, '--prefer-offline'], dir, 180_000);
  return { dir, install: online, offline: false };
}
