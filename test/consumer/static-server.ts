/**
 * A static file server on loopback for the consumer test: serves a built app's
 * folder with the content types a browser needs for modules and WebAssembly,
 * 404 for anything missing (no fallback page), and records every path asked for.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.map': 'application/json; charset=utf-8',
};

/** A running server: its origin, the paths requested so far, and how to stop it. */
export interface StaticServer {
  origin: string;
  requested: string[];
  close(): Promise<void>;
}

/** Serves `root` at http://127.0.0.1:<free port>/ (`/` is index.html). */
export async function serveFolder(root: string): Promise<StaticServer> {
  const requested: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    requested.push(path);
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    if (!file.startsWith(root + sep) || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    stat(file).then(
      (info) => {
        if (!info.isFile()) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, {
          'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
          'content-length': info.size,
        });
        createReadStream(file).pipe(res);
      },
      () => {
        res.writeHead(404).end();
      },
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requested,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => {
          done();
        });
      }),
  };
}
