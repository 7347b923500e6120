/**
 * The renderer's Content-Security-Policy, one string for every place that
 * sends it: the `app:` protocol handler (Electron), the renderer's Vite server
 * (the browser fallback and the end-to-end test) and a meta tag that the
 * renderer's Vite config writes into index.html from this file (so the built
 * page carries its policy to any server that serves it, with nothing to copy).
 * Only the app's own files load: no remote scripts, styles, frames or images;
 * WebAssembly may compile (HNSW and ONNX Runtime), nothing may `eval`.
 * `blob:` scripts are allowed because transformers.js loads ONNX Runtime's
 * factory module from a blob URL it makes of the app's own file (its WASM
 * cache); a blob URL can only be made by code already running in the app.
 */

/** The policy, directive by directive. */
export const CSP_DIRECTIVES: Readonly<Record<string, string>> = {
  'default-src': "'none'",
  'script-src': "'self' blob: 'wasm-unsafe-eval'",
  'worker-src': "'self'",
  // Sync talks to the user's own Qdrant: over https anywhere, or plain http on this machine.
  // The main process narrows this further to the one server the user configured.
  'connect-src': "'self' https: http://127.0.0.1:* http://localhost:*",
  'img-src': "'self' data:",
  'style-src': "'self'",
  'font-src': "'self'",
  'manifest-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
  'object-src': "'none'",
};

/** The policy as a header value. */
export const CONTENT_SECURITY_POLICY = Object.entries(CSP_DIRECTIVES)
  .map(([directive, sources]) => `${directive} ${sources}`)
  .join('; ');

/**
 * Directives a `<meta http-equiv>` policy cannot carry (browsers ignore them
 * there, with a console warning); the header keeps them.
 */
const HEADER_ONLY_DIRECTIVES: ReadonlySet<string> = new Set(['frame-ancestors', 'report-uri', 'sandbox']);

/** The same policy for index.html's meta element: the header's, less what only a header can carry. */
export const CONTENT_SECURITY_POLICY_META = Object.entries(CSP_DIRECTIVES)
  .filter(([directive]) => !HEADER_ONLY_DIRECTIVES.has(directive))
  .map(([directive, sources]) => `${directive} ${sources}`)
  .join('; ');
