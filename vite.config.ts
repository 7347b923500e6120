/// <reference types="vitest/config" />
import { resolve } from 'node:path';
import { defineConfig } from 'vite';
import { playwright } from '@vitest/browser-playwright';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from './scripts/chromium.js';

const wantsBrowser = process.argv.some((a) => a.includes('browser')) || !process.argv.includes('--project');
const executablePath = chromiumPath();
if (wantsBrowser && executablePath === undefined && process.env['VITEST'] !== undefined) console.warn(`[engram] ${NO_CHROMIUM_HELP}`);

export default defineConfig({
  build: {
    lib: {
      entry: resolve(import.meta.dirname, 'lib/index.ts'),
      formats: ['es'],
      fileName: 'engram',
    },
    outDir: 'dist',
    sourcemap: true,
    // Emit the ONNX Runtime wasm as files next to the bundle rather than as base64 inside it.
    assetsInlineLimit: 0,
    rolldownOptions: {
      external: [/^dexie/, /^hnswlib-wasm/, /^@huggingface\/transformers/, /^onnxruntime-web/, /^@qdrant\//],
    },
  },
  // The library's worker leaves transformers.js and ONNX Runtime to the app's bundler,
  // like the main entry does, instead of inlining 100 MB of wasm.
  worker: {
    format: 'es',
    rolldownOptions: { external: [/^@huggingface\/transformers/, /^onnxruntime-web/] },
  },
  optimizeDeps: {
    exclude: ['hnswlib-wasm', '@huggingface/transformers', 'onnxruntime-web'],
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
              launchOptions: executablePath === undefined ? { args: [...CHROMIUM_ARGS] } : { executablePath, args: [...CHROMIUM_ARGS] },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
