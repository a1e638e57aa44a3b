// ESLint: the recommended rules of ESLint and typescript-eslint. Formatting is Prettier's (`npm run format`).
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'data/', 'bench/.cache/', '.tmp/', 'web/dist/', 'web/src/api/schema.d.ts']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // `_name` marks a parameter or binding that is there for its position only.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The web client runs in the browser.
    files: ['web/src/**'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Migrations take `Kysely<any>`: each must keep working whatever the schema's type becomes later.
    files: ['src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read answers as the JSON they are, whatever their shape.
    files: ['test/**', 'test-crash/**', 'soak/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
