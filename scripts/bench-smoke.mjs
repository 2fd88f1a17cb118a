#!/usr/bin/env node
// `pnpm bench:smoke` (the last part of `pnpm test`): `pnpm bench` itself, every package's
// benchmark one after the other, each cut to its shortest (one round of about a second, a dense
// chain of 2 small blocks), then a check that each exited 0 and wrote its report, and that issue
// 20's rows carry the references measured in the same run (bench-references.mjs: the config
// server's hello, the rpc-proxy's references against real Core, the catch-up's node alone, the
// labels' change-only receiver and the K_max rows). No figure is judged here: speed belongs to
// `pnpm bench`. What it catches is a benchmark that no longer runs, as the rpc-proxy's once did
// for a whole issue, unnoticed, because nothing ran it, and a row that lost its reference.
//
// The reports of your last real run are left as they were: each bench-report.md (the packages'
// and the root's; bench-report-watch.md too) is set aside before the smoke run and put back after
// it, whatever its outcome; the smoke run's own reports are kept beside them as
// bench-report.smoke.md (not committed).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchPackages } from './bench-packages.mjs';
import { referenceGaps, reportSections } from './bench-references.mjs';

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
  BENCH_PAUSE_MS: '100', // rpc-proxy (real node)
  BENCH_DURATION: '1', // config-server
  BENCH_DURATION_SECONDS: '1', // storage
  BENCH_REPLAY_EVENTS: '100', // relay
  BENCH_ROUND_MS: '20', // bip352
  BENCH_PAYMENTS: '5', // silent-payments detection
  BENCH_DENSE_BLOCKS: '2', // silent-payments catch-up: a chain of its own, cached in bench/data
  BENCH_DENSE_TXS: '40',
  REMOTE_SCAN_ROWS: '2000', // silent-payments remote scan
};

/** The folders whose reports `pnpm bench` writes: the root and each package with a bench script. */
const folders = [root, ...benchPackages(root).map((p) => p.dir)];
/** A report a bench writes: bench-report.md, or bench-report-<name>.md (the config server's watch bench). */
const REPORT = /^bench-report(-[\w-]+)?\.md$/;
const KEPT = /^(bench-report(-[\w-]+)?)\.kept\.md$/;
const SMOKE = /^bench-report(-[\w-]+)?\.smoke\.md$/;
const named = (folder, pattern) => readdirSync(folder).filter((name) => pattern.test(name));

/** Each kept report back under its own name. */
function restoreKept(folder) {
  for (const name of named(folder, KEPT)) renameSync(join(folder, name), join(folder, name.replace(KEPT, '$1.md')));
}

// A kept report left by a smoke run that could not put it back (killed) is the real one: restore it first.
for (const folder of folders) restoreKept(folder);
for (const folder of folders) {
  for (const name of named(folder, REPORT)) renameSync(join(folder, name), join(folder, name.replace(/\.md$/, '.kept.md')));
}

/** The smoke reports to bench-report*.smoke.md, the real ones back where they were. */
function putBack() {
  for (const folder of folders) {
    for (const name of named(folder, SMOKE)) rmSync(join(folder, name));
    for (const name of named(folder, REPORT)) renameSync(join(folder, name), join(folder, name.replace(/\.md$/, '.smoke.md')));
    restoreKept(folder);
  }
}

// Ctrl-C or a kill reaches the benches too; this process stays to put the reports back once they end.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {});

let status = 1;
try {
  status = check(spawnSync('pnpm', ['run', 'bench'], { cwd: root, env: { ...process.env, ...SHORT }, stdio: 'inherit' }));
} finally {
  putBack();
}
process.exit(status);

function check(run) {
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (run.status !== 0) {
    console.error(`bench-smoke: pnpm bench failed (exit ${run.status ?? run.signal}) after ${seconds} s`);
    return 1;
  }
  // The root report has one section a package; bench-report.mjs says which wrote nothing this run.
  const reportPath = join(root, 'bench-report.md');
  const report = readFileSync(reportPath, 'utf8');
  const sections = reportSections(report);
  const missing = [...sections]
    .filter(([heading, s]) => heading.endsWith('(report from an earlier run)') || s.includes('No report: its benchmark did not write'))
    .map(([heading]) => heading);
  writeFileSync(
    reportPath,
    report.replace(/^# Benchmark report/, '# Benchmark report (smoke run: shortest settings, figures not meaningful)'),
  );
  if (sections.size === 0 || missing.length > 0) {
    console.error(`bench-smoke: no fresh report from: ${missing.join(', ') || 'any package'}`);
    return 1;
  }
  const gaps = referenceGaps(report);
  if (gaps.length > 0) {
    console.error(`bench-smoke: rows without their references of the same run: ${gaps.join('; ')}`);
    return 1;
  }
  console.log(
    `bench-smoke: ${sections.size} benchmarks ran and wrote their reports in ${seconds} s (bench-report.smoke.md; your own bench-report.md files are as they were)`,
  );
  return 0;
}
