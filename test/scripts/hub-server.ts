/**
 * A loopback stand-in for the Hugging Face hub, with its URL layout
 * (`/<repo>/resolve/<revision>/<path>`), for the tests of `engram-model
 * --model minilm`. Like the hub, a large file's resolve URL answers with a
 * redirect to a content host (`/cdn/…`) carrying `X-Linked-Size` and
 * `X-Linked-Etag` (the SHA-256); a small one is served directly with its ETag.
 * The content host honours `Range`. Faults can be switched on per path.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface HubFaults {
  /** Paths answered 404. */
  missing?: Set<string>;
  /** Path → bytes after which the connection is cut, once (then served whole). */
  cutOnce?: Map<string, number>;
  /** Paths whose bytes are served altered (same size). */
  corrupt?: Set<string>;
  /** Path → the SHA-256 the redirect declares instead of the real one. */
  declare?: Map<string, string>;
}

export interface HubRequest {
  method: string;
  url: string;
  range: string | undefined;
}

export interface LoopbackHub {
  endpoint: string;
  requests: HubRequest[];
  faults: HubFaults;
  close(): Promise<void>;
}

/** Files at or above this size are "LFS" files: redirected, like the hub's. */
const LFS_SIZE = 1_000_000;

/**
 * Serves `files` (path in the repository → file on disk) as `repo` at `revision`.
 * @example const hub = await startHub('Xenova/all-MiniLM-L6-v2', rev, new Map([['tokenizer.json', '/…/tokenizer.json']]))
 */
export async function startHub(
  repo: string,
  revision: string,
  files: ReadonlyMap<string, string>,
  faults: HubFaults = {},
): Promise<LoopbackHub> {
  const contents = new Map<string, { data: Buffer; sha256: string }>();
  for (const [path, file] of files) {
    const data = await readFile(file);
    contents.set(path, { data, sha256: createHash('sha256').update(data).digest('hex') });
  }
  const requests: HubRequest[] = [];
  const prefix = `/${repo}/resolve/${revision}/`;

  const serveBytes = (req: IncomingMessage, res: ServerResponse, path: string, extra: Record<string, string>): void => {
    const entry = contents.get(path);
    if (entry === undefined || faults.missing?.has(path) === true) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    let data = entry.data;
    if (faults.corrupt?.has(path) === true) {
      data = Buffer.from(data);
      for (let i = 0; i < data.length; i += 4096) data[i] = data[i]! ^ 0xff;
    }
    let start = 0;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range !== null) {
      start = Number(range[1]);
      if (start >= data.length) {
        res.writeHead(416, { 'content-range': `bytes */${data.length}` }).end();
        return;
      }
    }
    const body = data.subarray(start);
    const headers = {
      'content-length': String(body.length),
      'accept-ranges': 'bytes',
      'content-type': 'application/octet-stream',
      ...extra,
    };
    if (range !== null)
      res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${data.length - 1}/${data.length}` });
    else res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const cut = faults.cutOnce?.get(path);
    if (cut !== undefined && cut < body.length) {
      faults.cutOnce?.delete(path);
      res.write(body.subarray(0, cut), () => {
        res.socket?.destroy();
      });
      return;
    }
    res.end(body);
  };

  const server = createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url ?? '/', 'http://hub').pathname);
    requests.push({ method: req.method ?? 'GET', url, range: req.headers.range });
    if (url.startsWith('/cdn/')) {
      serveBytes(req, res, url.slice('/cdn/'.length), {});
      return;
    }
    if (!url.startsWith(prefix)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Repository not found');
      return;
    }
    const path = url.slice(prefix.length);
    const entry = contents.get(path);
    if (entry !== undefined && entry.data.length >= LFS_SIZE && faults.missing?.has(path) !== true) {
      res
        .writeHead(302, {
          location: `/cdn/${path}`,
          'x-linked-size': String(entry.data.length),
          'x-linked-etag': `"${faults.declare?.get(path) ?? entry.sha256}"`,
          'x-repo-commit': revision,
        })
        .end();
      return;
    }
    serveBytes(
      req,
      res,
      path,
      entry === undefined
        ? {}
        : { etag: `"${createHash('sha1').update(entry.data).digest('hex')}"`, 'x-repo-commit': revision },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** The repository's files of a local model folder, by their path in it. */
export function folderFiles(dir: string, paths: readonly string[]): Map<string, string> {
  return new Map(paths.map((p) => [p, join(dir, p)]));
}
