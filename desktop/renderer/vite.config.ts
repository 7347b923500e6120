/**
 * Vite config of the desktop renderer. `vite build` writes the renderer into
 * desktop/dist/app/renderer/ with every known embedding model whose folder is in
 * the repository's models/ (the offline model always; MiniLM when `npm run model`
 * built it) copied into models/, and the WASM files as assets (the Electron app serves that folder from app://engram/).
 * The dev server (the browser fallback of `npm start`, and the end-to-end test)
 * serves the same page with the same Content-Security-Policy header; index.html
 * gets the policy as a meta element in both, so the built page keeps it on any server.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { KNOWN_EMBEDDING_MODELS } from '../../lib/embed/known-models.js';
import { serveModels } from '../../ui/serve-models.js';
import { CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY_META } from '../main/content-security-policy.js';

const rendererRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(rendererRoot, '../..');
const headers = { 'content-security-policy': CONTENT_SECURITY_POLICY };
const modelsDir = resolve(repoRoot, 'models');
/** The app ships the models it was built with: the app picks the best of them at run time. */
const shippedModels = KNOWN_EMBEDDING_MODELS.map((m) => m.id).filter((id) =>
  existsSync(resolve(modelsDir, id, 'config.json')),
);

/**
 * Writes the policy into index.html as the first element of its head (a meta
 * policy covers only what comes after it), in the dev server and the build.
 */
const cspMeta: Plugin = {
  name: 'engram-csp-meta',
  transformIndexHtml: () => [
    {
      tag: 'meta',
      attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY_META },
      injectTo: 'head-prepend',
    },
  ],
};

// eslint-disable-next-line no-restricted-syntax -- Vite reads its config from the default export.
export default defineConfig({
  root: rendererRoot,
  base: '/',
  cacheDir: resolve(repoRoot, 'node_modules/.vite/desktop'),
  plugins: [cspMeta, serveModels({ modelsDir, headers, copyInto: shippedModels })],
  server: { fs: { allow: [repoRoot] }, headers },
  preview: { headers },
  build: {
    outDir: resolve(repoRoot, 'desktop/dist/app/renderer'),
    emptyOutDir: true,
    // WASM and the model stay files (no base64 inside the bundle).
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'chrome140',
  },
  optimizeDeps: {
    entries: [resolve(rendererRoot, 'index.html')],
    exclude: ['@huggingface/transformers', 'onnxruntime-web'],
    include: ['libsodium-wrappers'],
  },
  worker: { format: 'es' },
});
