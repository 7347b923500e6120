/**
 * A Vite plugin shared by the demo page and the desktop renderer: serves the
 * offline model folder `<repo>/models/` (built by scripts/ensure-model.mjs,
 * git-ignored) at `/models/` in the dev server, where TransformersEmbedder looks
 * for it in browsers, and, when `copyInto` is given, copies the named models
 * into the build output so a packaged app carries them (of the ONNX weights, only
 * the file of the dtype the model's config.json names: a folder built with
 * `--fp32` also holds the 90 MB float weights the app never loads). Node side (Vite config).
 */
import { createReadStream } from 'node:fs';
import { cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import type { Plugin } from 'vite';

const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
  '.txt': 'text/plain; charset=utf-8',
};

/** transformers.js' file name suffix of each dtype (`onnx/model<suffix>.onnx`). */
const DTYPE_SUFFIX: Readonly<Record<string, string>> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  q4f16: '_q4f16',
  bnb4: '_bnb4',
};

/**
 * Which files of the model folder `dir` a copy keeps: every file but ONNX weights of
 * another dtype than the one its config.json names (`transformers.js_config.dtype`);
 * all of them when it names none or one this table does not know.
 */
export async function usedModelFiles(dir: string): Promise<(file: string) => boolean> {
  let dtype: unknown;
  try {
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    dtype = (config['transformers.js_config'] as Record<string, unknown> | undefined)?.['dtype'];
  } catch {
    return () => true;
  }
  const suffix = typeof dtype === 'string' ? DTYPE_SUFFIX[dtype] : undefined;
  if (suffix === undefined) return () => true;
  const used = `model${suffix}.onnx`;
  // External weights sit beside the graph as `model<suffix>.onnx_data`.
  return (file) =>
    basename(dirname(file)) !== 'onnx' || !/\.onnx(_data(_\d+)?)?$/.test(file) || basename(file).startsWith(used);
}

/** The listing of the model folders served, at `/models/${MODEL_LISTING}`: `{ "models": [folder, …] }`. */
export const MODEL_LISTING = 'index.json';

/**
 * The model folders in `dir` (a folder holding a config.json, one or two levels down:
 * `engram-glove-100d`, `Xenova/all-MiniLM-L6-v2`), sorted.
 */
export async function modelFolders(dir: string): Promise<string[]> {
  const found: string[] = [];
  const isModel = (path: string): Promise<boolean> =>
    stat(join(dir, path, 'config.json')).then(
      (info) => info.isFile(),
      () => false,
    );
  for (const top of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!top.isDirectory()) continue;
    if (await isModel(top.name)) found.push(top.name);
    else
      for (const sub of await readdir(join(dir, top.name), { withFileTypes: true })) {
        if (sub.isDirectory() && (await isModel(`${top.name}/${sub.name}`))) found.push(`${top.name}/${sub.name}`);
      }
  }
  return found.sort();
}

/** Options of {@link serveModels}. */
export interface ServeModelsOptions {
  /** The folder holding the model folders, e.g. `<repo>/models`. */
  modelsDir: string;
  /** Headers added to every model response (the desktop renderer sends its CSP). */
  headers?: Record<string, string>;
  /** Model folder names copied to `<outDir>/models/` by `vite build`. */
  copyInto?: readonly string[];
}

/**
 * Serves `modelsDir/**` at `/models/**` (GET and HEAD), never anything outside it, and
 * the listing of its model folders at `/models/index.json` (so a page learns which
 * models are here in one request, without asking for files that are not); a build
 * writes the listing of the models it copied.
 * @example
 * plugins: [serveModels({ modelsDir: resolve(root, 'models') })]
 */
export function serveModels(options: ServeModelsOptions): Plugin {
  const modelsDir = resolve(options.modelsDir);
  let outDir = '';
  return {
    name: 'engram-models',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    async writeBundle() {
      for (const model of options.copyInto ?? []) {
        const used = await usedModelFiles(join(modelsDir, model));
        await cp(join(modelsDir, model), join(outDir, 'models', model), { recursive: true, filter: used });
      }
      if (options.copyInto !== undefined)
        await writeFile(
          join(outDir, 'models', MODEL_LISTING),
          `${JSON.stringify({ models: [...options.copyInto].sort() })}\n`,
        );
    },
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
        if (path === `/${MODEL_LISTING}`) {
          modelFolders(modelsDir).then(
            (models) => {
              for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
              res.setHeader('content-type', 'application/json');
              res.setHeader('cache-control', 'no-cache');
              res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ models }));
            },
            () => {
              res.statusCode = 500;
              res.end();
            },
          );
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
            for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
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
