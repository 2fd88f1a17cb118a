'use strict';
/** The real-node suite (test/real-node): the services as processes in front of a regtest bitcoind (@repo/regtest), run through `regtest-gate`. */
module.exports = {
  preset: '@repo/jest-presets',
  testMatch: ['<rootDir>/test/real-node/**/*.test.ts'],
  testTimeout: 120000,
  maxWorkers: 1,
};
