/// <reference types="vitest/config" />
import { posix, resolve } from 'node:path';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import { playwright } from '@vitest/browser-playwright';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from './scripts/chromium.js';

const wantsBrowser = process.argv.some((a) => a.includes('browser')) || !process.argv.includes('--project');
const executablePath = chromiumPath();
if (wantsBrowser && executablePath === undefined && process.env['VITEST'] !== undefined)
  console.warn(`[engram] ${NO_CHROMIUM_HELP}`);

/**
 * Library build only. Vite writes each worker's URL (the embedding worker, and bulk decryption's:
 * lib/store/bulk-decrypt.ts) as
 * `new URL(/* @vite-ignore *\/ "/assets/embed-worker-….js", "" + import.meta.url)`: a root path
 * that is wrong once the package sits in an app's node_modules, in a form the app's bundler skips.
 * This rewrites it to `new URL("./assets/embed-worker-….js", import.meta.url)`, relative to the
 * chunk, which the app's Vite (or webpack, Rollup) recognises inside `new Worker(…)` and bundles
 * together with transformers.js and ONNX Runtime's files. Line breaks are kept so the source map holds.
 */
function workerUrlForApps(): Plugin {
  const pattern =
    /new URL\((\s*)\/\* @vite-ignore \*\/(\s*)"\/(assets\/(?:embed|bulk-decrypt)-worker-[\w-]+\.js)",(\s*)"" \+ import\.meta\.url/g;
  return {
    name: 'engram:worker-url-for-apps',
    apply: (config, { command }) =>
      command === 'build' && config.build?.lib !== undefined && config.build.lib !== false,
    generateBundle(_options, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== 'chunk' || !/(?:embed|bulk-decrypt)-worker/.test(chunk.code)) continue;
        chunk.code = chunk.code.replace(pattern, (_match, s1: string, s2: string, file: string, s3: string) => {
          let url = posix.relative(posix.dirname(chunk.fileName), file);
          if (!url.startsWith('.')) url = `./${url}`;
          return `new URL(${s1}${s2}${JSON.stringify(url)},${s3}import.meta.url`;
        });
      }
    },
  };
}

export default defineConfig({
  plugins: [workerUrlForApps()],
  build: {
    lib: {
      // Four entries: the core (`engram`), sync (`engram/sync`) and the framework adapters
      // (`engram/ai-sdk`, `engram/langchain`). The Qdrant client stays external and is imported
      // only by the chunk of lib/sync/qdrant-target.ts, which the core reaches through a dynamic
      // import on the first sync with a URL; the frameworks (optional peers) stay external and
      // are imported only by their adapter's chunk, which the core never loads. libsodium stays external
      // too: only the first open of a store encrypted at rest imports it (lib/store/row-cipher.ts).
      entry: {
        engram: resolve(import.meta.dirname, 'lib/index.ts'),
        sync: resolve(import.meta.dirname, 'lib/sync/index.ts'),
        'ai-sdk': resolve(import.meta.dirname, 'lib/ai-sdk/index.ts'),
        langchain: resolve(import.meta.dirname, 'lib/langchain/index.ts'),
      },
      formats: ['es'],
      fileName: (_format, entryName) => `${entryName}.js`,
    },
    outDir: 'dist',
    sourcemap: true,
    // Emit the ONNX Runtime wasm as files next to the bundle rather than as base64 inside it.
    assetsInlineLimit: 0,
    rolldownOptions: {
      external: [
        /^dexie/,
        /^@huggingface\/transformers/,
        /^onnxruntime-web/,
        /^@qdrant\//,
        /^libsodium/,
        /^ai($|\/)/,
        /^@ai-sdk\//,
        /^@langchain\//,
      ],
    },
  },
  // The library's worker leaves transformers.js and ONNX Runtime to the app's bundler,
  // like the main entry does, instead of inlining 100 MB of wasm.
  worker: {
    format: 'es',
    rolldownOptions: { external: [/^@huggingface\/transformers/, /^onnxruntime-web/] },
  },
  optimizeDeps: {
    exclude: ['@huggingface/transformers', 'onnxruntime-web'],
    // Imported on the first open of an encrypted store (row-cipher.ts): bundled up front, so a test
    // page is never reloaded when Vite meets it late.
    include: ['libsodium-wrappers'],
  },
  server: { fs: { allow: ['.'] } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.browser.test.ts'],
          setupFiles: ['test/setup-node.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/**/*.browser.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions:
                executablePath === undefined
                  ? { args: [...CHROMIUM_ARGS] }
                  : { executablePath, args: [...CHROMIUM_ARGS] },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
