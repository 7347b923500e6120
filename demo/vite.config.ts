/**
 * Vite config of the demo page (`npm run demo` = `vite demo`, which picks this
 * file up because the root is `demo/`). The page imports the library from
 * `../lib`, so the dev server may read the whole repository; the offline model
 * folder `models/` (built by scripts/ensure-model.mjs, git-ignored) is served
 * under `/models/`, where `TransformersEmbedder` looks for it in browsers.
 * Nothing here reaches the network.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const demoRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(demoRoot, '..');
const modelsDir = resolve(repoRoot, 'models');

const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
  '.txt': 'text/plain; charset=utf-8',
};

/** Serves `<repo>/models/**` at `/models/**` (GET and HEAD), never anything outside it. */
function serveModels(): Plugin {
  return {
    name: 'engram-demo-models',
    configureServer(server) {
      server.middlewares.use('/models', (req, res, next) => {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          next();
          return;
        }
        let path: string;
        try {
          path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
        } catch {
          res.statusCode = 400;
          res.end();
          return;
        }
        const file = resolve(modelsDir, `.${path}`);
        if (!file.startsWith(modelsDir + sep)) {
          res.statusCode = 403;
          res.end();
          return;
        }
        stat(file).then(
          (info) => {
            if (!info.isFile()) {
              res.statusCode = 404;
              res.end();
              return;
            }
            res.setHeader('content-type', CONTENT_TYPES[extname(file)] ?? 'application/octet-stream');
            res.setHeader('content-length', String(info.size));
            res.setHeader('cache-control', 'no-cache');
            if (req.method === 'HEAD') {
              res.end();
              return;
            }
            createReadStream(file).pipe(res);
          },
          () => {
            res.statusCode = 404;
            res.end();
          },
        );
      });
    },
  };
}

export default defineConfig({
  root: demoRoot,
  // Its own cache, so a demo server never races the test runners over node_modules/.vite.
  cacheDir: resolve(repoRoot, 'node_modules/.vite/demo'),
  plugins: [serveModels()],
  server: { fs: { allow: [repoRoot] } },
  optimizeDeps: {
    entries: [resolve(demoRoot, 'index.html')],
    exclude: ['hnswlib-wasm', '@huggingface/transformers', 'onnxruntime-web'],
  },
  worker: { format: 'es' },
});
