// ESLint with typescript-eslint's recommended rules; why ESLint: README, "Lint, format and layers".
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
