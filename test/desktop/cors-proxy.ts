// A loopback HTTP proxy that adds CORS headers, standing in for a Qdrant server
// with CORS on (Qdrant's default): the page calls it from another origin, it
// forwards to the Qdrant-compatible test server, which has no CORS of its own.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'content-type, api-key, user-agent, authorization',
  'access-control-allow-methods': 'GET, POST, PUT, DELETE, PATCH, OPTIONS',
  'access-control-max-age': '600',
};

/** Starts the proxy in front of `target` (an http://127.0.0.1:PORT base URL); counts forwarded requests. */
export async function startCorsProxy(
  target: string,
): Promise<{ url: string; forwarded: () => number; apiKeys: Set<string>; close: () => Promise<void> }> {
  const to = new URL(target);
  let forwarded = 0;
  const apiKeys = new Set<string>();
  const server: Server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    forwarded++;
    const key = req.headers['api-key'];
    if (typeof key === 'string') apiKeys.add(key);
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...CORS });
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502, CORS).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded: () => forwarded,
    apiKeys,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => {
          done();
        });
      }),
  };
}
