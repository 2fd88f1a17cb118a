#!/usr/bin/env node
// Issue 20's rows each come with the reference measured in the same run (docs/performance/): this
// checks a root bench report (scripts/bench-report.mjs) for them, row by row, without judging a
// figure:
// - apps/config-server: the 4 KB file's rate beside the express hello over the same TLS, and the ratio;
// - apps/rpc-proxy: each call against Core beside its direct row, with the bare forwarder
//   (apps/rpc-proxy/bench/real-node.mjs), and its row of the targets table (throughput against
//   the forwarder, added p50 and p99); or the line saying the bench found no Core;
// - apps/silent-payments: each catch-up beside the node alone, and the ratio of the pair;
// - packages/bip352: the native scan with 1,000 and 100,000 labels, the labels' cost against the
//   change-only receiver (one by one and in runs of 64), and the K_max rows.
// bench-smoke.mjs runs it on every smoke run; `node scripts/bench-references.mjs <report>` checks
// a report file (exit 1 and one line a gap).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The rows each call against Core must have beside its direct one (the labels real-node.mjs writes). */
export const CORE_REFERENCES = ['proxy', 'bare forwarder (reference)'];

/** The columns of real-node.mjs's table of the targets: throughput against the bare forwarder, added p50 and p99 over direct Core. */
const TARGETS = ['call', 'proxy / bare forwarder', 'added p50 ms', 'added p99 ms'];

/** The heading of real-node.mjs's table: present whenever it ran against a Core. */
const CORE_TABLE = '# rpc-proxy: the proxy, a bare forwarder and direct Core, real Bitcoin Core';
/** The line real-node.mjs writes instead when it finds no Core. */
const CORE_NOT_RUN = 'rpc-proxy real-node benchmark not run';

/** A figure as the benches print it: `29224`, `20,430`, `1.27`, `-1`, optionally followed by its range in parentheses. */
const NUMBER = /^-?\d[\d,]*(\.\d+)?( \(.+\))?$/;
/** A ratio in per cent, its range before or after the sign: `84.4 %`, `80.9 (74.9–90.9) %`, `127 % (rounds 124–133 %)`. */
const PERCENT = /^-?\d+(\.\d+)?( \([^)]*\))? %/;

/** The Markdown tables of `text`: each header's cells and its rows' cells (the separator line left out). */
function tables(text) {
  const found = [];
  let current;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (current === undefined) found.push((current = { header: cells, rows: [] }));
    else if (!cells.every((cell) => /^:?-+:?$/.test(cell))) current.rows.push(cells);
  }
  return found;
}

/** The table whose header has all of `columns`, as rows of objects keyed by header cell; undefined when none has. */
function table(text, columns) {
  const t = tables(text).find(({ header }) => columns.every((c) => header.includes(c)));
  return t && t.rows.map((cells) => Object.fromEntries(t.header.map((name, i) => [name, cells[i] ?? ''])));
}

/** The cells of `row` named in `columns` that do not match `pattern`, as `column: "cell"`. */
function unreadable(row, columns, pattern) {
  return columns.filter((c) => !pattern.test(row[c])).map((c) => `${c}: "${row[c]}"`);
}

/** apps/config-server: the file endpoint beside the hello endpoint of the same run. */
function configServerGaps(section) {
  const rows = table(section, ['measure', 'figure', 'reference (same run)', 'ratio']);
  if (rows === undefined) return ['no table of measures, figures and references'];
  const row = rows.find((r) => r.measure.startsWith('GET /<env>/<file>, 4 KB with substitution'));
  if (row === undefined) return ['no row for GET /<env>/<file>, 4 KB with substitution'];
  const gaps = unreadable(row, ['figure'], NUMBER).concat(unreadable(row, ['ratio'], PERCENT));
  if (!/^express hello over the same TLS: \d+/.test(row['reference (same run)'])) {
    gaps.push(`reference (same run): "${row['reference (same run)']}", not the express hello over the same TLS`);
  }
  return gaps.map((gap) => `the 4 KB file: ${gap}`);
}

/**
 * apps/rpc-proxy: each call against Core with the reference rows that follow its direct row (their
 * call and backend cells empty), or the line saying the bench found no Core. A Core table none of
 * whose calls can be read (its format changed under this check) is a gap too.
 */
function rpcProxyGaps(section) {
  if (!section.includes(CORE_TABLE))
    return section.includes(CORE_NOT_RUN) ? [] : ['neither the table against Core nor the line saying it was not run'];
  const calls = [];
  for (const row of table(section, ['call', 'backend', 'to']) ?? []) {
    if (row.call !== '') calls.push({ name: row.call, core: row.backend === 'Core' && row.to === 'direct', rows: new Set() });
    else calls.at(-1)?.rows.add(row.to);
  }
  const core = calls.filter((call) => call.core);
  if (core.length === 0) return ['the table against Core has no call this check can read'];
  const targets = table(section, TARGETS);
  return core.flatMap(({ name, rows }) => {
    const lacking = CORE_REFERENCES.filter((r) => !rows.has(r));
    const target = targets?.find((row) => row.call === name);
    return [
      ...(lacking.length > 0 ? [`${name}: ${lacking.join(', ')}`] : []),
      ...(target === undefined
        ? [`${name}: no row in the targets table`]
        : unreadable(target, TARGETS.slice(1, 2), PERCENT)
            .concat(unreadable(target, TARGETS.slice(2), NUMBER))
            .map((gap) => `${name}: ${gap}`)),
    ];
  });
}

const CATCH_UP = ['catch-up (ms)', 'node alone (ms, median of all)', 'node alone / catch-up, paired'];

/** apps/silent-payments: the catch-up beside the node serving the same blocks alone. */
function silentPaymentsGaps(section) {
  const rows = table(section, CATCH_UP);
  if (rows === undefined) return ['no catch-up table (catch-up, node alone, their ratio)'];
  if (rows.length === 0) return ['no catch-up row'];
  return [...rows.flatMap((row) => unreadable(row, CATCH_UP, NUMBER).map((gap) => `catch-up: ${gap}`)), ...indexGaps(section)];
}

const WITH_INDEX = ['catch-up (ms)', 'node alone / catch-up, paired', 'bytes stored per indexed transaction'];

/** The catch-up with the light-wallet index on: SQLite always, PostgreSQL measured or its "not run" reason. */
function indexGaps(section) {
  const rows = table(section, ['index store', ...WITH_INDEX]);
  if (rows === undefined) return ['no catch-up table with the index on (index store, catch-up, node alone / catch-up, bytes)'];
  return ['SQLite', 'PostgreSQL'].flatMap((store) => {
    const row = rows.find((r) => r['index store'] === store);
    if (row === undefined) return [`index on ${store}: no row`];
    if (store === 'PostgreSQL' && row['catch-up (ms)'].startsWith('not run')) return [];
    return unreadable(row, WITH_INDEX, NUMBER).map((gap) => `index on ${store}: ${gap}`);
  });
}

const RATE = 'scan (tx/s CPU)';
const COSTS = ['cost of the labels (time vs change only, paired rounds)', 'the same in runs of 64 (scanTransactions)'];
const SCAN = ['backend', 'labels', RATE, ...COSTS];
const LABELLED = ['change + 1,000', 'change + 100,000'];

/** packages/bip352: the native scan with labels beside the change-only receiver, and the K_max rows. */
function bip352Gaps(section) {
  const gaps = [];
  const rows = table(section, SCAN);
  if (rows === undefined) {
    gaps.push("no scan table with the labels' cost");
  } else {
    const native = (labels) => rows.find((r) => r.backend === 'native' && r.labels === labels);
    const changeOnly = native('change only');
    if (changeOnly === undefined) gaps.push('native: no change-only row (the reference)');
    else gaps.push(...unreadable(changeOnly, [RATE], NUMBER).map((gap) => `native, change only: ${gap}`));
    for (const labels of LABELLED) {
      const row = native(labels);
      if (row === undefined) gaps.push(`native: no row for ${labels}`);
      else
        gaps.push(
          ...unreadable(row, [RATE], NUMBER)
            .concat(unreadable(row, COSTS, PERCENT))
            .map((gap) => `native, ${labels}: ${gap}`),
        );
    }
  }
  const kmax = table(section, ['labels', 'ms a scan (CPU)']);
  if (kmax === undefined) return [...gaps, 'no K_max table'];
  for (const labels of ['change only', ...LABELLED]) {
    const row = kmax.find((r) => r.labels === labels);
    if (row === undefined) gaps.push(`K_max: no row for ${labels}`);
    else gaps.push(...unreadable(row, ['ms a scan (CPU)'], NUMBER).map((gap) => `K_max, ${labels}: ${gap}`));
  }
  return gaps;
}

/** The sections of a root report (scripts/bench-report.mjs: `## <package>`, then its report), by their heading. */
export function reportSections(report) {
  return new Map(
    report
      .split(/^## /m)
      .slice(1)
      .map((section) => [section.split('\n', 1)[0].trim(), section]),
  );
}

/** Each package's check, by the name of its section in the root report. */
const CHECKS = {
  'apps/config-server': configServerGaps,
  'apps/rpc-proxy': rpcProxyGaps,
  'apps/silent-payments': silentPaymentsGaps,
  'packages/bip352': bip352Gaps,
};

/**
 * What a root bench report lacks of issue 20's rows and their references: one line a gap, named
 * by its section (a section missing, or one from an earlier run, is a gap too). None when all are there.
 */
export function referenceGaps(report) {
  const sections = reportSections(report);
  return Object.entries(CHECKS).flatMap(([name, check]) => {
    const section = sections.get(name);
    if (section === undefined) {
      const stale = sections.has(`${name} (report from an earlier run)`);
      return [`${name}: ${stale ? 'its report is from an earlier run' : 'no section in the report'}`];
    }
    return check(section).map((gap) => `${name}: ${gap}`);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (file === undefined) {
    console.error('usage: node scripts/bench-references.mjs <bench-report.md>');
    process.exit(2);
  }
  const gaps = referenceGaps(readFileSync(file, 'utf8'));
  for (const line of gaps) console.error(line);
  process.exit(gaps.length > 0 ? 1 : 0);
}
