/**
 * Where Electron's binary is, for `npm start` and `npm run desktop:electron`.
 * The electron package on npm holds no binary: its install script downloads
 * one from GitHub's releases, and install scripts are off here (`.npmrc`), so
 * `npm install` never runs it; `npm run desktop:electron` does, on purpose.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The command that fetches the binary (package.json's `desktop:electron`). */
export const GET_ELECTRON_COMMAND = 'npm run desktop:electron';

const require = createRequire(import.meta.url);

/**
 * The Electron executable, or undefined when its binary was never downloaded.
 * @returns {string | undefined}
 */
export function electronBinary() {
  try {
    // The electron package's main export is the path of the binary; it throws when the binary is missing.
    const path = /** @type {unknown} */ (require('electron'));
    return typeof path === 'string' && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The electron package's version and its install script (which downloads the binary).
 * @returns {{ version: string, installer: string }}
 */
export function electronPackage() {
  const manifest = /** @type {{ version: string }} */ (require('electron/package.json'));
  return { version: manifest.version, installer: require.resolve('electron/install.js') };
}
