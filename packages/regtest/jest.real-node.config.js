'use strict';
/** The real-node suite (test/real-node): run through `regtest-gate`, which sets BITCOIND. */
module.exports = {
  preset: '@repo/jest-presets',
  testMatch: ['<rootDir>/test/real-node/**/*.test.ts'],
  testTimeout: 120000,
  maxWorkers: 1,
};
