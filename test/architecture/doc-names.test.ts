// The map cannot rot silently: every `lib/...` path and every backticked file, function, class or
// member that ARCHITECTURE.md and docs/*.md name exists in the tree. A rename or a move that leaves
// a page naming what is gone fails here, and the page is fixed with the code.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
/** The folders whose code a page may name. */
const CODE_FOLDERS = ['lib', 'desktop', 'demo', 'ui', 'scripts', 'bench'];
const CODE_FILE = /\.(ts|mjs|js|cc)$/;
/** A file a page names, by the endings of code and of the pages themselves. */
const FILE_NAME = /^[\w./-]+\.(ts|mjs|js|cc|css|md)$/;
/** An identifier, a member of one (`EngineStore.write`, `VectorState.#settle`), or a call of one (`add()`). */
const CODE_NAME = /^[A-Za-z_$#][\w$#]*(\.[A-Za-z_$#][\w$#]*)*(\(.*\))?$/;
/** Names of other projects' things that a page explains (an ONNX operator), not engram's code. */
const NOT_OURS: ReadonlySet<string> = new Set(['DynamicQuantizeLinear']);

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.parentPath.includes('node_modules'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const pages = ['ARCHITECTURE.md', ...filesUnder('docs').filter((f) => f.endsWith('.md'))];
const rootFiles = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => e.name);
const files = [...rootFiles, ...CODE_FOLDERS.flatMap(filesUnder), ...pages, ...filesUnder('test')];
const fileSet = new Set(files);
/** Every word of the code: a name a page gives must be one of them. */
const words = new Set(
  files
    .filter((f) => CODE_FILE.test(f) && !f.startsWith('test/'))
    .flatMap((f) => readFileSync(join(ROOT, f), 'utf8').match(/[A-Za-z_$][\w$]*/g) ?? []),
);

/** The backticked spans of a page, outside its fenced code blocks. */
function backticked(text: string): string[] {
  return [...text.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
}

/** A path the page names exists: from the root (`lib/…`), or as the end of some file's path (`scope-check.ts`). */
function fileExists(name: string): boolean {
  const path = name.replace(/^\.\.\//, '');
  return fileSet.has(path) || files.some((f) => f.endsWith(`/${path}`));
}

/** What a page names that the tree does not hold. */
function missing(page: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const gone: string[] = [];
  for (const path of text.match(/\blib\/[\w./-]*[\w/]/g) ?? []) {
    const bare = path.replace(/\/$/, '');
    if (!fileSet.has(bare) && !files.some((f) => f.startsWith(`${bare}/`))) gone.push(path);
  }
  for (const span of backticked(text)) {
    if (FILE_NAME.test(span)) {
      if (!fileExists(span)) gone.push(span);
    } else if (CODE_NAME.test(span) && !NOT_OURS.has(span)) {
      const parts = span.replace(/\(.*\)$/, '').split('.');
      if (parts.some((p) => !words.has(p.replace(/^#/, '')))) gone.push(span);
    }
  }
  return gone;
}

describe('the architecture pages name what exists', () => {
  it.each(pages)('every path and code name in %s is in the tree', (page) => {
    expect(missing(page)).toEqual([]);
  });
});
