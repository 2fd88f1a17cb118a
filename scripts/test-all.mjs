#!/usr/bin/env node
// `pnpm test` at the root: every test of the repository, each step run whatever the one before it
// gave, so that one failing package never hides the others' results:
//   1. build, typecheck, lint and the unit/integration suites of every package (turbo --continue);
//   2. eslint and prettier over the root scripts;
//   3. the real-node suites (they need `bitcoind`; see the README);
//   4. the bench smoke run (every benchmark at its shortest, scripts/bench-smoke.mjs).
// Prints each step's outcome at the end and exits 1 when any failed.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// pnpm checks the install before every `pnpm run`; the steps run inside one, already checked.
const env = { ...process.env, pnpm_config_verify_deps_before_run: '' };
const pnpm = process.env.npm_execpath;

/** One step: a label and the command that runs it. */
const STEPS = [
  ['build, typecheck, lint, unit suites', 'turbo', ['run', 'build', 'typecheck', 'lint', 'test', '--concurrency=2', '--continue']],
  ['root scripts lint', 'node', [pnpm, 'run', 'lint:root']],
  ['real-node suites', 'turbo', ['run', 'test:real-node', '--concurrency=2', '--continue']],
  ['bench smoke run', 'node', [scriptPath('bench-smoke.mjs')]],
];

function scriptPath(name) {
  return join(root, 'scripts', name);
}

if (!pnpm) {
  console.error('test-all: run it through pnpm (`pnpm test`), which names itself in npm_execpath');
  process.exit(2);
}
const outcomes = [];
for (const [label, command, args] of STEPS) {
  const started = Date.now();
  const run = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' });
  const seconds = Math.round((Date.now() - started) / 1000);
  outcomes.push({ label, ok: run.status === 0, detail: run.error?.message ?? `exit ${run.status ?? run.signal}`, seconds });
}
console.log('\ntest-all:');
for (const { label, ok, detail, seconds } of outcomes) {
  console.log(`  ${ok ? 'ok    ' : 'FAILED'} ${label} (${detail}, ${seconds} s)`);
}
process.exit(outcomes.every((o) => o.ok) ? 0 : 1);
