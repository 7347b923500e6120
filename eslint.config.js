// Type-aware linting for every TypeScript file; CI runs it (`npm run lint`).
import tseslint from 'typescript-eslint';

// The layer picture of ARCHITECTURE.md, checked: a folder imports only the folders
// listed for it (an `import type` is not an arrow and is always allowed).
const ALL = ['store', 'search', 'vector', 'embed', 'llm', 'sync', 'engine', 'memory', 'agent'];
const PARTS = ['store', 'search', 'vector', 'embed', 'llm'];
const LAYERS = [
  { files: ['lib/errors.ts', 'lib/util/**'], may: [] },
  { files: ['lib/store/**'], may: ['store'] },
  { files: ['lib/search/**'], may: ['store', 'search'] },
  { files: ['lib/vector/**'], may: ['vector'] },
  { files: ['lib/embed/**'], may: ['embed'] },
  { files: ['lib/llm/**'], may: ['llm'] },
  { files: ['lib/sync/**'], may: [...PARTS, 'sync'] },
  { files: ['lib/engine/**'], may: [...PARTS, 'engine'] },
  { files: ['lib/memory/**'], may: [...PARTS, 'engine', 'memory'] },
  { files: ['lib/engram.ts'], may: [...PARTS, 'sync', 'engine', 'memory'], facade: true },
  { files: ['lib/agent/**'], may: [...PARTS, 'sync', 'engine', 'memory', 'agent'], facade: true },
];
/** Wire code quarantined behind one file each (CONVENTIONS.md 9). */
const QUARANTINE = [
  { name: 'hnswlib-wasm', file: 'lib/vector/hnswlib-runtime.ts' },
  { name: '@qdrant/js-client-rest', file: 'lib/sync/qdrant-target.ts' },
];
export const layerRules = LAYERS.map(({ files, may, facade }) => ({
  files,
  rules: {
    '@typescript-eslint/no-restricted-imports': /** @type {import('eslint').Linter.RuleEntry} */ ([
      'error',
      {
        patterns: [
          ...ALL.filter((f) => !may.includes(f)).map((f) => ({
            regex: `(^|/)${f}/`,
            allowTypeImports: true,
            message: `lib/${f}/ is a higher layer (or a sibling outside this folder's tree); see ARCHITECTURE.md. Take a function or an interface as an argument instead.`,
          })),
          { regex: '(^|/)index\\.js$', allowTypeImports: true, message: 'lib/index.ts is the public door; import what you need from its own file.' },
          ...(facade === true && files[0] !== 'lib/engram.ts'
            ? []
            : [{ regex: '(^|/)engram\\.js$', allowTypeImports: true, message: 'lib/engram.ts is the facade above this layer; see ARCHITECTURE.md.' }]),
          ...QUARANTINE.filter((q) => !files.includes(q.file)).map((q) => ({ regex: `^${q.name.replace('/', '\\/')}`, message: `only ${q.file} imports ${q.name}` })),
        ],
      },
    ]),
  },
}));

export default tseslint.config(
  // test/consumer/fixtures: apps that import the packed 'engram', type-checked by the consumer test.
  { ignores: ['dist/**', 'node_modules/**', 'models/**', 'bench/results/**', 'coverage/**', 'test/consumer/fixtures/**'] },
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.node.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      'no-restricted-syntax': [
        'error',
        { selector: "ThrowStatement > NewExpression[callee.name='Error']", message: 'Throw a typed EngramError subclass.' },
        { selector: 'ExportDefaultDeclaration', message: 'No default exports: export by name.' },
      ],
    },
  },
  ...layerRules,
  ...QUARANTINE.map((q) => ({
    files: [q.file],
    rules: { '@typescript-eslint/no-restricted-imports': /** @type {const} */ ('off') },
  })),
  {
    files: ['vite.config.ts', 'eslint.config.js', 'bench/**', 'scripts/**', 'test/**', 'demo/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Test doubles implement async interfaces without awaiting anything.
    files: ['test/**'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
);
