#!/usr/bin/env node
// `pnpm bench` at the root runs every package's benchmark one after the other (turbo, concurrency 1,
// so they do not compete for the two cores), then this script gathers each package's
// bench-report.md into one report, bench-report.md at the root. Every figure in it stands next to
// a reference measured in the same run, with the ratio.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { benchPackages } from './bench-packages.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Number(process.argv[2] ?? 0);
const sections = [];
for (const { id, dir } of benchPackages(root)) {
  const report = join(dir, 'bench-report.md');
  if (!existsSync(report)) {
    sections.push(`## ${id}\n\nNo report: its benchmark did not write bench-report.md.\n`);
    continue;
  }
  const stale = statSync(report).mtimeMs < started;
  sections.push(`## ${id}${stale ? ' (report from an earlier run)' : ''}\n\n${readFileSync(report, 'utf8').trim()}\n`);
}
const header = [
  '# Benchmark report',
  '',
  `${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}).`,
  'Each figure is next to a reference measured in the same run; the ratio is the figure that travels between machines.',
  '',
].join('\n');
writeFileSync(join(root, 'bench-report.md'), `${header}\n${sections.join('\n')}`);
console.log(`bench-report.md written (${sections.length} sections)`);
