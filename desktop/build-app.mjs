#!/usr/bin/env node
/**
 * Builds the Electron app into desktop/dist/app/, the folder electron-builder
 * packs (see electron-builder.yml): the renderer (Vite, with the embedding models
 * found in models/: the offline model always, MiniLM when `npm run model` built it,
 * see desktop/renderer/vite.config.ts; and the WASM files), the main process (ES module) and the preload (CommonJS,
 * as Electron's sandbox requires), and the app's own package.json, which has no
 * dependencies: everything the app runs is bundled. Builds the offline model
 * first when it is missing. Run: `node desktop/build-app.mjs`.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'vite';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const appDir = resolve(root, 'desktop/dist/app');

/**
 * One Node-side bundle (main or preload) for Electron.
 * @param {string} entry
 * @param {string} outDir
 * @param {'es' | 'cjs'} format
 * @param {string} fileName
 */
async function bundleNodeSide(entry, outDir, format, fileName) {
  await build({
    configFile: false,
    root,
    logLevel: 'warn',
    build: {
      ssr: resolve(root, entry),
      outDir,
      emptyOutDir: true,
      target: 'node22',
      minify: false,
      sourcemap: false,
      rolldownOptions: {
        external: ['electron', /^node:/],
        output: { format, entryFileNames: fileName },
      },
    },
  });
}

await promisify(execFile)(process.execPath, [resolve(root, 'scripts/ensure-model.mjs')], { cwd: root });
await build({ configFile: resolve(root, 'desktop/renderer/vite.config.ts'), logLevel: 'warn' });
await bundleNodeSide('desktop/main/main.ts', resolve(appDir, 'main'), 'es', 'main.js');
await bundleNodeSide('desktop/preload/preload.ts', resolve(appDir, 'preload'), 'cjs', 'preload.cjs');

/** @type {{ version: string, license: string, description: string }} */
const project = JSON.parse(await readFile(resolve(root, 'package.json'), 'utf8'));
await mkdir(appDir, { recursive: true });
await writeFile(
  resolve(appDir, 'package.json'),
  `${JSON.stringify(
    {
      name: 'engram-desktop',
      productName: 'engram',
      version: project.version,
      description: 'engram: a private, offline manager of what your AI assistant remembers',
      license: project.license,
      author: { name: 'engram contributors', email: 'engram@users.noreply.github.com' },
      homepage: 'https://github.com/engram/engram',
      type: 'module',
      main: 'main/main.js',
    },
    null,
    2,
  )}\n`,
);
console.log(`engram desktop app built in ${appDir}`);
