#!/usr/bin/env node
'use strict';
/**
 * regtest-gate <command...>: runs the command when Bitcoin Core 29.x is found (BITCOIND, or
 * bitcoind on PATH), with BITCOIND set to it; otherwise prints one line saying the real-node
 * suite was not run and how to run it, and exits 0 (the test-double suites still run
 * everywhere). BITCOIND set to something that is not an executable is an error (exit 1).
 */
const { spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { findBitcoind, bitcoindVersion, notRunMessage, BITCOIND_MAJOR } = require('../dist/find.js');

function packageName() {
  if (process.env.npm_package_name) return process.env.npm_package_name;
  try {
    return JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).name;
  } catch {
    return process.cwd();
  }
}

const command = process.argv.slice(2);
if (command.length === 0) {
  console.error('usage: regtest-gate <command...>');
  process.exit(2);
}
const pkg = packageName();
let found;
try {
  found = findBitcoind(process.env);
} catch (err) {
  console.error(`${pkg}: ${err.message}`);
  process.exit(1);
}
if (found === undefined) {
  console.log(notRunMessage(pkg));
  process.exit(0);
}
const version = bitcoindVersion(found.path);
if (version === undefined || Number(version.split('.')[0]) !== BITCOIND_MAJOR) {
  const what = `${found.path} is Bitcoin Core ${version ?? '(version unknown)'}, it needs Bitcoin Core ${BITCOIND_MAJOR}.x`;
  if (found.source === 'env') {
    console.error(`${pkg}: ${what}`);
    process.exit(1);
  }
  console.log(notRunMessage(pkg, what));
  process.exit(0);
}
const result = spawnSync(command[0], command.slice(1), { stdio: 'inherit', env: { ...process.env, BITCOIND: found.path } });
if (result.error) {
  console.error(`${pkg}: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
