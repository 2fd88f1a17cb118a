#!/usr/bin/env node
// Sums the jest summaries ("Tests:  1 failed, 2 skipped, 40 passed, 43 total") of a test log and
// prints one plain line, "N passed, M failed" (and ", K skipped" when any), for CI to read.
import { readFileSync } from 'node:fs';

const log = readFileSync(process.argv[2], 'utf8');
const totals = { passed: 0, failed: 0, skipped: 0, suites: 0 };
for (const match of log.matchAll(/Tests:\s+([^\n]*?)\d+ total/g)) {
  totals.suites++;
  for (const part of match[1].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
    const key = part[2] === 'todo' ? 'skipped' : part[2];
    totals[key] += Number(part[1]);
  }
}
const failedSuites = (log.match(/Test Suites: \d+ failed/g) ?? []).length;
if (totals.suites === 0) {
  console.log('0 passed, 1 failed');
  console.error('test-summary: no jest summary found in the log');
  process.exit(1);
}
console.log(
  `${totals.passed} passed, ${totals.failed + (totals.failed === 0 ? failedSuites : 0)} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`,
);
