// Function sizes in lib/ (issue 25: "the median and largest function in lib/ are smaller").
//   node scripts/function-sizes.mjs [--ref <commit>] [--top N] [--distribution]
// Without --ref it reads the working tree; with --ref it reads lib/ as committed there (git show).
// --distribution also prints how many functions have each size from 1 to 10 lines (and 0 to 10 statements),
// with the running share, so one sees what moving the median would take.
// A function is a named one: a function declaration, method, constructor, accessor, or a function
// expression / arrow bound to a variable, property or class field. Inline callbacks (`xs.map((x) => …)`)
// are part of the function that holds them. Per function:
//   lines       its source lines, first to last (nested named functions included)
//   statements  the statements in its body, not counting those of nested named functions
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const args = process.argv.slice(2);
const ref = args.includes('--ref') ? args[args.indexOf('--ref') + 1] : undefined;
const top = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 10;
const distribution = args.includes('--distribution');

/** @param {string[]} a */
const git = (...a) => execFileSync('git', a, { encoding: 'utf8', maxBuffer: 1 << 28 });
const paths = (ref === undefined ? git('ls-files', 'lib') : git('ls-tree', '-r', '--name-only', ref, 'lib'))
  .split('\n')
  .filter((p) => /\.tsx?$/.test(p) && !p.endsWith('.d.ts'));
/** @param {string} p */
const read = (p) => (ref === undefined ? readFileSync(p, 'utf8') : git('show', `${ref}:${p}`));

/** @param {ts.Node} node @returns {node is ts.FunctionLikeDeclaration} */
function isNamedFunction(node) {
  if (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  )
    return node.body !== undefined;
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const p = node.parent;
    return ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p);
  }
  return false;
}

/** @param {ts.FunctionLikeDeclaration} node */
function nameOf(node) {
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.text ?? '?'}.constructor`;
  const named = ts.isArrowFunction(node) || ts.isFunctionExpression(node) ? node.parent : node;
  const own = /** @type {{ name?: ts.Node }} */ (named).name?.getText() ?? '(anonymous)';
  const cls = ts.isClassLike(named.parent) ? `${named.parent.name?.text ?? '?'}.` : '';
  return cls + own;
}

/** Statements in `body`, not descending into nested named functions. */
/** @param {ts.ConciseBody} body */
function countStatements(body) {
  let n = 0;
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (isNamedFunction(node)) return;
    if (ts.isStatement(node) && !ts.isBlock(node)) n++;
    ts.forEachChild(node, visit);
  };
  if (ts.isBlock(body)) ts.forEachChild(body, visit);
  else {
    n = 1; // an expression body is one statement
    ts.forEachChild(body, visit);
  }
  return n;
}

/** @type {{ where: string; name: string; lines: number; statements: number }[]} */
const fns = [];
for (const path of paths) {
  const sf = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (isNamedFunction(node)) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      fns.push({
        where: `${path}:${start + 1}`,
        name: nameOf(node),
        lines: end - start + 1,
        statements: countStatements(/** @type {ts.ConciseBody} */ (node.body)),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

/** @param {number[]} xs */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? Number(s[m]) : (Number(s[m - 1]) + Number(s[m])) / 2;
};
/** @param {number[]} xs @param {number} p */
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const lines = fns.map((f) => f.lines);
const stmts = fns.map((f) => f.statements);
console.log(`lib/ at ${ref ?? 'working tree'}: ${fns.length} functions in ${paths.length} files`);
console.log('              median   p90   largest');
console.log(
  `lines       ${String(median(lines)).padStart(8)} ${String(pct(lines, 0.9)).padStart(5)} ${String(Math.max(...lines)).padStart(9)}`,
);
console.log(
  `statements  ${String(median(stmts)).padStart(8)} ${String(pct(stmts, 0.9)).padStart(5)} ${String(Math.max(...stmts)).padStart(9)}`,
);
console.log(`\nlargest ${top} by lines:`);
for (const f of [...fns].sort((a, b) => b.lines - a.lines).slice(0, top))
  console.log(`${String(f.lines).padStart(5)} lines ${String(f.statements).padStart(4)} stmts  ${f.name}  ${f.where}`);

if (distribution) {
  /** @param {string} label @param {number[]} xs @param {number} from */
  const table = (label, xs, from) => {
    console.log(`\n${label}: functions of each size, and the share at or below it (median at 50%)`);
    let below = xs.filter((x) => x < from).length;
    for (let n = from; n <= 10; n++) {
      const at = xs.filter((x) => x === n).length;
      below += at;
      console.log(
        `${String(n).padStart(4)} ${String(at).padStart(6)}  ${((100 * below) / xs.length).toFixed(1).padStart(5)}%`,
      );
    }
    console.log(`   > 10 ${String(xs.filter((x) => x > 10).length).padStart(3)}`);
  };
  table('lines', lines, 1);
  table('statements', stmts, 0);
  const over = (/** @type {number} */ n) => lines.filter((x) => x > n).length;
  console.log(`\nthe tail: ${over(20)} functions over 20 lines, ${over(40)} over 40, ${over(60)} over 60`);
}
