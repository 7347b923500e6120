#!/usr/bin/env node
/**
 * `npm run desktop:electron`: downloads Electron's binary for this machine by
 * running the electron package's own install script (the one `npm install`
 * skips, install scripts being off), with its checksums. The binary comes from
 * GitHub's releases, not the npm registry, or from `ELECTRON_MIRROR` when set.
 * Says plainly what failed and what to try; exits 1 then, and changes nothing.
 */
import { spawn } from 'node:child_process';
import { GET_ELECTRON_COMMAND, electronBinary, electronPackage } from './electron-binary.mjs';

const DEFAULT_SOURCE = 'https://github.com/electron/electron/releases/download/';

/**
 * Fails with the reason and what to try, and exits 1.
 * @param {string} reason
 * @returns {never}
 */
function fail(reason) {
  console.error(`engram: Electron's binary was not installed: ${reason}`);
  console.error(`Until it is, \`npm start\` serves the same app in your browser.`);
  process.exit(1);
}

const { version, installer } = electronPackage();
const installed = electronBinary();
if (installed !== undefined) {
  console.log(`Electron ${version} is already installed (${installed}). \`npm start\` opens the app.`);
  process.exit(0);
}
if (process.env['ELECTRON_SKIP_BINARY_DOWNLOAD'] !== undefined && process.env['ELECTRON_SKIP_BINARY_DOWNLOAD'] !== '') {
  fail(
    'ELECTRON_SKIP_BINARY_DOWNLOAD is set in your environment, so the installer downloads nothing. Unset it and run this again.',
  );
}

const source = process.env['ELECTRON_MIRROR'] ?? process.env['npm_config_electron_mirror'] ?? DEFAULT_SOURCE;
console.log(`Downloading Electron ${version} for ${process.platform}-${process.arch} from ${source} (about 100 MB)…`);

/** @type {string[]} */
const errorLines = [];
const code = await new Promise((done) => {
  const child = spawn(process.execPath, [installer], { stdio: ['ignore', 'inherit', 'pipe'] });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (/** @type {string} */ chunk) => {
    errorLines.push(...chunk.split('\n'));
  });
  child.on('error', (e) => {
    errorLines.push(e.message);
    done(1);
  });
  child.on('exit', (exitCode) => {
    done(exitCode ?? 1);
  });
});

const binary = electronBinary();
if (code !== 0 || binary === undefined) {
  // The installer prints the error's stack; its first line is the error itself.
  const first =
    errorLines.map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('at ')) ??
    `the installer exited with code ${code}`;
  // fetch's own message hides its cause (no route, refused, unknown host): say what it means.
  const error = first.endsWith('fetch failed') ? `${first}: the address could not be reached` : first;
  fail(
    [
      `the download from ${source} failed (${error}).`,
      'Check that this machine reaches that address (it is not the npm registry).',
      'Behind a proxy: ELECTRON_GET_USE_PROXY=true with HTTPS_PROXY set. Or use a mirror: ELECTRON_MIRROR=<mirror URL ending in />.',
      `Then run \`${GET_ELECTRON_COMMAND}\` again.`,
    ].join('\n'),
  );
}
console.log(`Electron ${version} installed (${binary}). Run \`npm start\` to open engram.`);
