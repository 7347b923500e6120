#!/usr/bin/env node
/**
 * `npm start`: launches the engram desktop app in Electron when Electron's
 * binary is installed; otherwise says so in one line and serves the same
 * renderer in the browser, where the web implementation of the preload API
 * (downloads and uploads instead of file dialogs, keys kept for the session
 * only) stands in. `--web` serves the browser version even when Electron is there.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

/**
 * The Electron executable, or undefined when its binary was never downloaded
 * (install scripts off, or no access to Electron's download host).
 * @returns {string | undefined}
 */
function electronBinary() {
  try {
    // The electron package's main export is the path of the binary; it throws when the binary is missing.
    const path = /** @type {unknown} */ (createRequire(import.meta.url)('electron'));
    return typeof path === 'string' && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs a command and resolves with its exit code.
 * @param {string} command
 * @param {string[]} args
 * @param {boolean} [quiet] only errors are shown
 * @returns {Promise<number>}
 */
function run(command, args, quiet = false) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: root, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
    child.on('error', fail);
    child.on('exit', (code) => {
      done(code ?? 1);
    });
  });
}

const binary = process.argv.includes('--web') ? undefined : electronBinary();
if (binary !== undefined) {
  const built = await run(process.execPath, [resolve(root, 'desktop/build-app.mjs')]);
  if (built !== 0) process.exit(built);
  process.exit(await run(binary, [resolve(root, 'desktop/dist/app')]));
}

console.log('The Electron binary is missing (it downloads at install time, from outside the npm registry); serving the same app in your browser instead.');
const ensured = await run(process.execPath, [resolve(root, 'scripts/ensure-model.mjs')], true);
if (ensured !== 0) process.exit(ensured);
const { createServer } = await import('vite');
// HMR off: this serves the app for use, not for development.
const server = await createServer({ configFile: resolve(root, 'desktop/renderer/vite.config.ts'), server: { host: '127.0.0.1', hmr: false }, logLevel: 'warn' });
await server.listen();
console.log(`engram: open ${server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:5173/'} (Ctrl+C stops it)`);
