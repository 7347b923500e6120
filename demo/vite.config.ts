/**
 * Vite config of the demo page (`npm run demo` = `vite demo`, which picks this
 * file up because the root is `demo/`). The page imports the library from
 * `../lib`, so the dev server may read the whole repository; the offline model
 * folder `models/` (built by scripts/ensure-model.mjs, git-ignored) is served
 * under `/models/`, where `TransformersEmbedder` looks for it in browsers.
 * Nothing here reaches the network.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { serveModels } from '../ui/serve-models.js';

const demoRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(demoRoot, '..');
const modelsDir = resolve(repoRoot, 'models');

export default defineConfig({
  root: demoRoot,
  // Its own cache, so a demo server never races the test runners over node_modules/.vite.
  cacheDir: resolve(repoRoot, 'node_modules/.vite/demo'),
  plugins: [serveModels({ modelsDir })],
  server: { fs: { allow: [repoRoot] } },
  optimizeDeps: {
    entries: [resolve(demoRoot, 'index.html')],
    exclude: ['@huggingface/transformers', 'onnxruntime-web'],
    include: ['libsodium-wrappers'],
  },
  worker: { format: 'es' },
});
