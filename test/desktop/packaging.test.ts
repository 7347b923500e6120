// Packaging: builds the app (desktop/build-app.mjs), packs it with
// electron-builder --dir using a stand-in Electron distribution (a folder with
// an executable named `electron`: Electron's binary cannot be downloaded here,
// and nothing is fetched), then reads the asar: the renderer, the offline model,
// the sentence models this repository builds and the WASM files are in it; tests,
// sources and node_modules are not.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, constants, mkdtemp, rm, writeFile, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { extractFile, listPackage } from '@electron/asar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY_META } from '../../desktop/main/content-security-policy.js';
import { DEFAULT_EMBEDDING_MODEL, KNOWN_EMBEDDING_MODELS } from '../../lib/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
let work: string;
let unpacked: string;
let files: string[];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engram-package-'));
  const electronDist = join(work, 'electron-dist');
  await mkdir(electronDist);
  await writeFile(join(electronDist, 'electron'), '#!/bin/sh\necho "stand-in for the Electron binary"\n');
  await chmod(join(electronDist, 'electron'), 0o755);
  await run(process.execPath, [resolve(ROOT, 'desktop/build-app.mjs')], { cwd: ROOT, timeout: 300_000 });
  const out = join(work, 'release');
  await run(
    process.execPath,
    [
      resolve(ROOT, 'node_modules/electron-builder/cli.js'),
      '--dir',
      '--linux',
      '--x64',
      '--config',
      'electron-builder.yml',
      `-c.electronDist=${electronDist}`,
      `-c.directories.output=${out}`,
    ],
    { cwd: ROOT, timeout: 300_000, env: { ...process.env, CI: 'true' } },
  );
  unpacked = join(out, 'linux-unpacked');
  files = listPackage(join(unpacked, 'resources/app.asar'), { isPack: false });
}, 600_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('electron-builder --dir', () => {
  it('packs the main process, the preload and the app manifest, and renames the executable', async () => {
    expect(files).toEqual(expect.arrayContaining(['/package.json', '/main/main.js', '/preload/preload.cjs']));
    await access(join(unpacked, 'engram-desktop'), constants.X_OK);
  });

  it('packs the built renderer with its entry, scripts, worker and styles', () => {
    expect(files).toContain('/renderer/index.html');
    expect(files.some((f) => /^\/renderer\/assets\/index-[\w-]+\.js$/.test(f))).toBe(true);
    expect(files.some((f) => /^\/renderer\/assets\/embed-worker-[\w-]+\.js$/.test(f))).toBe(true);
    expect(files.some((f) => /^\/renderer\/assets\/index-[\w-]+\.css$/.test(f))).toBe(true);
  });

  it('packs an index.html that carries the policy itself, first in its head (for a server that sends no header)', () => {
    const html = extractFile(join(unpacked, 'resources/app.asar'), 'renderer/index.html').toString('utf8');
    const first = /<head>\s*<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
    const decoded = first
      ?.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&');
    expect(decoded).toBe(CONTENT_SECURITY_POLICY_META);
    // The charset declaration must still come within the first 1024 bytes.
    expect(Buffer.byteLength(html.slice(0, html.indexOf('<meta charset="utf-8"')))).toBeLessThan(1024);
  });

  it('packs the offline model and the ONNX Runtime WASM files', () => {
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx']) {
      expect(files).toContain(`/renderer/models/engram-glove-100d/${file}`);
    }
    expect(files.filter((f) => f.endsWith('.wasm')).length).toBeGreaterThan(0);
    expect(files.some((f) => /ort-wasm-simd-threaded\.asyncify-[\w-]+\.wasm$/.test(f))).toBe(true);
    expect(files.some((f) => /ort-wasm-simd-threaded\.asyncify-[\w-]+\.mjs$/.test(f))).toBe(true);
  });

  it('packs every sentence model it was built with (npm run model): its int8 weights, not the float ones', () => {
    // This repository builds MiniLM and e5-small (`npm run model`, also in .ci/run, with the float weights too):
    // the app ships what models/ holds and picks the best at run time.
    const built = KNOWN_EMBEDDING_MODELS.filter(
      (m) => m.id !== DEFAULT_EMBEDDING_MODEL && existsSync(resolve(ROOT, 'models', m.id, 'config.json')),
    );
    expect(built.length).toBeGreaterThan(0);
    for (const { id } of built) {
      for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) {
        expect(files).toContain(`/renderer/models/${id}/${file}`);
      }
      expect(files.filter((f) => f.startsWith(`/renderer/models/${id}/onnx/`))).toEqual([
        `/renderer/models/${id}/onnx/model_quantized.onnx`,
      ]);
    }
    // Nothing else under models/: only the known models built, and the offline one.
    const folders = [...built.map((m) => m.id), DEFAULT_EMBEDDING_MODEL].map((id) => `/renderer/models/${id}/`);
    const listing = JSON.parse(
      extractFile(join(unpacked, 'resources/app.asar'), 'renderer/models/index.json').toString('utf8'),
    ) as unknown;
    expect(listing).toEqual({ models: [...built.map((m) => m.id), DEFAULT_EMBEDDING_MODEL].sort() });
    const stray = files.filter(
      (f) =>
        f.startsWith('/renderer/models/') &&
        f !== '/renderer/models/index.json' &&
        !folders.some((d) => f.startsWith(d) || d.startsWith(`${f}/`)),
    );
    expect(stray).toEqual([]);
  });

  it('leaves out tests, TypeScript sources, source maps and node_modules', () => {
    expect(files.filter((f) => /\.(ts|tsx|map)$/.test(f))).toEqual([]);
    expect(
      files.filter((f) =>
        /\/(test|tests|__tests__|__screenshots__|node_modules|lib|desktop|bench|scripts)(\/|$)/.test(f),
      ),
    ).toEqual([]);
    expect(files.filter((f) => f.includes('.test.') || f.includes('.e2e.'))).toEqual([]);
    // Only what build-app.mjs writes is at the top.
    expect(new Set(files.map((f) => f.split('/')[1]))).toEqual(
      new Set(['main', 'preload', 'renderer', 'package.json']),
    );
  });
});
