/**
 * Where ONNX Runtime Web's files are served from in a browser: the copies in
 * node_modules/onnxruntime-web, turned into URLs by Vite `?url` imports (served
 * in dev, emitted as assets in a build). transformers.js would otherwise point
 * ONNX Runtime at a CDN. transformers.js 4.3.2 imports `onnxruntime-web/webgpu`,
 * whose bundle loads the *asyncify* build, so that is the pair named here.
 */

import type { WasmPaths } from './transformers-runtime.js';

/**
 * Absolute URLs of the ONNX Runtime Web factory and binary that this app serves.
 * @example
 * env.backends.onnx.wasm.wasmPaths = await localWasmPaths();
 */
export async function localWasmPaths(): Promise<WasmPaths> {
  const [mjs, wasm] = await Promise.all([
    import('onnxruntime-web/ort-wasm-simd-threaded.asyncify.mjs?url'),
    import('onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url'),
  ]);
  const base = globalThis.location.href;
  return { mjs: new URL(mjs.default, base).href, wasm: new URL(wasm.default, base).href };
}
