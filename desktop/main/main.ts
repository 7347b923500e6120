/**
 * Electron's entry (bundled to desktop/dist/app/main/main.js): hands the real
 * Electron module to startDesktop(). Everything testable lives there.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as electron from 'electron';
import { startDesktop } from './desktop-app.js';
import { DEFAULT_MCP_PORT } from './mcp-server.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The stdio bridge of a checkout (desktop/dist/app/main → the repository); a packaged app has none. */
const bridgeScript = resolve(here, '../../../../scripts/engram-mcp.mjs');

startDesktop(
  electron,
  { renderer: join(here, '../renderer'), preload: join(here, '../preload/preload.cjs') },
  process.platform,
  {
    mcp: {
      port: Number(process.env['ENGRAM_MCP_PORT'] ?? DEFAULT_MCP_PORT),
      ...(existsSync(bridgeScript) ? { bridgeScript } : {}),
    },
  },
).started.catch((e: unknown) => {
  console.error('engram could not start:', e);
  electron.app.quit();
});
