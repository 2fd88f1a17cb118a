'use strict';
/**
 * Shared jest preset. Tests are TypeScript, transpiled by ts-jest (type checking is the
 * `typecheck` script's job, so a run stays fast on two cores). Some dependencies
 * (@noble/*, @scure/*) ship ES modules only: Node 22.12+ loads them through require(esm),
 * but jest has its own module loader, so they are transpiled to CommonJS here.
 */
const ESM_ONLY = ['@noble', '@scure', '@hpke', '@peculiar', 'pvtsutils', 'pvutils', 'micro-packed'];

module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: {
    '^.+\\.(ts|js|mjs)$': [
      require.resolve('ts-jest'),
      {
        tsconfig: {
          module: 'commonjs',
          moduleResolution: 'node10',
          target: 'ES2022',
          allowJs: true,
          esModuleInterop: true,
          isolatedModules: true,
          sourceMap: true,
        },
        diagnostics: false,
      },
    ],
  },
  // pnpm stores `@scope/name` as `.pnpm/@scope+name@1.2.3/` and `name` as `.pnpm/name@1.2.3/`.
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${ESM_ONLY.join('|')})[+/@])`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json', 'node'],
  // A hang catcher only: on two busy cores (CI runs beside stress-ng) a heavy suite may take long.
  testTimeout: 120_000,
};
