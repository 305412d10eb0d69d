// ESLint for src/ and test/ (npm run lint): rules that find defects tsc does not.
// ESLint's and typescript-eslint's recommended sets, less the rules that only judge
// style here, plus the rules that need types to see a promise nobody waits for.
// Unused names are tsc's (noUnusedLocals, noUnusedParameters; tsconfig.test.json
// covers test/). bench/ is scripts, run by hand, and not linted.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'bench/', 'coverage/', 'node_modules/', 'test/helpers/*.mjs'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise left floating loses its error (an unhandled rejection ends the
      // process) and its ordering (a close not awaited before the folder is removed).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // tsc reports unused names, and allows the `_`-named ones a destructuring leaves out.
      '@typescript-eslint/no-unused-vars': 'off',
      // JSON from servers, files and SQLite rows is read as `any` at the edges.
      '@typescript-eslint/no-explicit-any': 'off',
      // The terminal sanitizer and the tokenizers match control characters on purpose.
      'no-control-regex': 'off',
      // Style only: an escape that changes nothing, spaces counted in a pattern.
      'no-useless-escape': 'off',
      'no-regex-spaces': 'off',
    },
  },
);
