#!/usr/bin/env node
// `pnpm bench:smoke` (the last part of `pnpm test`): `pnpm bench` itself, every package's
// benchmark one after the other, each cut to its shortest (one round of about a second, a dense
// chain of 2 small blocks), then a check that each exited 0 and wrote its report. No figure is
// judged here: speed belongs to `pnpm bench`. What it catches is a benchmark that no longer runs,
// as the rpc-proxy's once did for a whole issue, unnoticed, because nothing ran it.
//
// The reports it writes (each package's bench-report.md and the root's) replace those of a real
// run: they are not committed, and the root report says "smoke run" at its top.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();

/**
 * The shortest run of each benchmark (the names are each bench's own, see its header): time,
 * rounds and data cut down; the numbers of clients and connections kept, because the services'
 * connection caps are what stopped two benchmarks (the rpc-proxy's and the config server's watch
 * bench, whose 50 and 1,000 clients from one address were cut once the caps came in).
 */
const SHORT = {
  BENCH_ROUNDS: '1',
  BENCH_SECONDS: '1', // rpc-proxy, relay
  BENCH_DURATION: '1', // config-server
  BENCH_DURATION_SECONDS: '1', // storage
  BENCH_REPLAY_EVENTS: '100', // relay
  BENCH_ROUND_MS: '20', // bip352
  BENCH_PAYMENTS: '5', // silent-payments detection
  BENCH_DENSE_BLOCKS: '2', // silent-payments catch-up: a chain of its own, cached in bench/data
  BENCH_DENSE_TXS: '40',
};

const run = spawnSync('pnpm', ['run', 'bench'], {
  cwd: root,
  env: { ...process.env, ...SHORT },
  stdio: 'inherit',
});
const seconds = ((Date.now() - started) / 1000).toFixed(0);
if (run.status !== 0) {
  console.error(`bench-smoke: pnpm bench failed (exit ${run.status ?? run.signal}) after ${seconds} s`);
  process.exit(1);
}

// The root report has one section a package; bench-report.mjs says which wrote nothing this run.
const reportPath = join(root, 'bench-report.md');
const report = readFileSync(reportPath, 'utf8');
const sections = report.split(/^## /m).slice(1);
const missing = sections
  .filter((s) => s.split('\n', 1)[0].endsWith('(report from an earlier run)') || s.includes('No report: its benchmark did not write'))
  .map((s) => s.split('\n', 1)[0]);
writeFileSync(
  reportPath,
  report.replace(/^# Benchmark report/, '# Benchmark report (smoke run: shortest settings, figures not meaningful)'),
);
if (sections.length === 0 || missing.length > 0) {
  console.error(`bench-smoke: no fresh report from: ${missing.join(', ') || 'any package'}`);
  process.exit(1);
}
console.log(`bench-smoke: ${sections.length} benchmarks ran and wrote their reports in ${seconds} s`);
