// Type-aware linting for every TypeScript file; CI runs it (`npm run lint`).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'models/**', 'bench/results/**', 'coverage/**'] },
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
