'use strict';
/** The real-node suite (test/real-node): the scanner against a regtest bitcoind (@repo/regtest) through the rpc-proxy, run through `regtest-gate`. */
module.exports = {
  preset: '@repo/jest-presets',
  testMatch: ['<rootDir>/test/real-node/**/*.test.ts'],
  testTimeout: 120000,
  maxWorkers: 1,
};
