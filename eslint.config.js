// ESLint with typescript-eslint's recommended rules; why ESLint: docs/design/architecture.md, "Checks".
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['node_modules/', 'cdk.out/', 'coverage/', '.placement-data/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `const { key: _key, ...rest } = item` drops a field; `_` marks a parameter a signature requires.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A variable a signal handler reads before it is assigned stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // A promise nobody awaits lets a Lambda answer before its write, or a test pass before its assertion:
    // these rules need the types (about 20 s more), the rest of recommendedTypeChecked is not on.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['vitest.config.ts'] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // Tests and tools assert on JSON read from the wire and on CDK's template: untyped data by nature.
    files: ['test/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { globals: { module: 'writable' } },
  },
);
