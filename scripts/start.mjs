#!/usr/bin/env node
/**
 * `npm start`: launches the engram desktop app in Electron when Electron's
 * binary is installed (`npm run desktop:electron` fetches it); otherwise says
 * so in one line, naming that command, and serves the same
 * renderer in the browser, where the web implementation of the preload API
 * (downloads and uploads instead of file dialogs, keys kept for the session
 * only) stands in. `--web` serves the browser version even when Electron is there.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GET_ELECTRON_COMMAND, electronBinary } from './electron-binary.mjs';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

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

const web = process.argv.includes('--web');
const binary = web ? undefined : electronBinary();
if (binary !== undefined) {
  const built = await run(process.execPath, [resolve(root, 'desktop/build-app.mjs')]);
  if (built !== 0) process.exit(built);
  process.exit(await run(binary, [resolve(root, 'desktop/dist/app')]));
}

if (!web) {
  console.log(
    `Electron's binary is not installed (\`npm install\` does not download it: install scripts are off). \`${GET_ELECTRON_COMMAND}\` fetches it; meanwhile the same app is served in your browser.`,
  );
}
const ensured = await run(process.execPath, [resolve(root, 'scripts/ensure-model.mjs')], true);
if (ensured !== 0) process.exit(ensured);
const { createServer } = await import('vite');
// HMR off: this serves the app for use, not for development.
const server = await createServer({
  configFile: resolve(root, 'desktop/renderer/vite.config.ts'),
  server: { host: '127.0.0.1', hmr: false },
  logLevel: 'warn',
});
await server.listen();
console.log(`engram: open ${server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:5173/'} (Ctrl+C stops it)`);
