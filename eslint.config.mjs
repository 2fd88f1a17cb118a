// ESLint 9 flat configuration of the whole repository: typescript-eslint's type-aware rules on
// TypeScript, the recommended set on JavaScript, formatting left to prettier (`prettier --check`).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/.turbo/**', 'packages/bip352/native/build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `typeof import('./x')` types a lazy require() (the bip352 backends): that is its purpose.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // Values parsed from JSON (request bodies, node answers) are checked where they are used;
      // typing every intermediate step of that would be noise, not safety.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // `${n}` of a number or bigint is what the messages mean.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
      // Native addons and lazily loaded backends are required on purpose.
      '@typescript-eslint/no-require-imports': 'off',
      // An interface method declared async without an await turns a synchronous throw into a
      // rejection, which its callers rely on (the storage backends): not a defect.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: nodeGlobals() },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Small units (docs/development.md): no function of the shipped code over 150 lines.
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts', 'scripts/**/*.mjs'],
    rules: { 'max-lines-per-function': ['error', { max: 150, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['**/test/**/*.ts'],
    rules: {
      // jest's expect(obj.method) and mocks.
      '@typescript-eslint/unbound-method': 'off',
      // Answers parsed from JSON in assertions.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  prettier,
);

/** Node's globals for plain JavaScript (scripts, benchmarks, jest configurations). */
function nodeGlobals() {
  const names = [
    'process',
    'console',
    'Buffer',
    'require',
    'module',
    '__dirname',
    '__filename',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'URL',
    'fetch',
    'performance',
    'AbortController',
    'TextEncoder',
    'TextDecoder',
    'structuredClone',
    'exports',
    'global',
    'queueMicrotask',
  ];
  return Object.fromEntries(names.map((n) => [n, 'readonly']));
}
