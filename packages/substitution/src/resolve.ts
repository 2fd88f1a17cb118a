import type { EnvEntry } from './parse-env';
import { referencedName, referencesOf, settleInOrder, VALUE_REF_RE } from './references';

/** docs/config-server.md, "Variable substitution", rule 3: at most 10 levels. */
export const DEFAULT_MAX_DEPTH = 10;
/** A resolved value larger than this is refused, so a doubling chain cannot blow memory. */
export const DEFAULT_MAX_VALUE_LENGTH = 1 << 20;

/** Why a variable could not be resolved (logged; its placeholders are kept as written). */
export type ResolveProblem =
  | { kind: 'cycle'; name: string; path: string[] }
  | { kind: 'depth'; name: string; path: string[] }
  | { kind: 'too-large'; name: string; length: number };

/** Options of {@link resolveEnv}. */
export interface ResolveOptions {
  maxDepth?: number;
  maxValueLength?: number;
}

/** The `.env` resolved as a set: the values that resolved, and what went wrong with the others. */
export interface ResolvedEnv {
  values: ReadonlyMap<string, string>;
  /** Names defined in the `.env` that did not resolve (their own problem, or one they depend on). */
  unresolvable: ReadonlySet<string>;
  /** The root causes, for the logs: names only, never values. */
  problems: ResolveProblem[];
}

type Outcome = { ok: true; value: string; depth: number } | { ok: false };

/**
 * Resolves every variable of the `.env` as a set, so the order of lines does not matter.
 * Values may reference others as `$NAME` or `${NAME}`; `\$` is a literal dollar. A reference
 * to a missing variable, or an invalid `${...}`, stays as written (rules 5 and 6). A variable
 * that sits on a cycle, needs more than `maxDepth` levels (a plain value is one level), or
 * grows past `maxValueLength` does not resolve: it is reported in `problems`, and references
 * to it stay as written (rule 4).
 */
export function resolveEnv(entries: ReadonlyMap<string, EnvEntry>, options: ResolveOptions = {}): ResolvedEnv {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxValueLength = options.maxValueLength ?? DEFAULT_MAX_VALUE_LENGTH;
  const outcomes = new Map<string, Outcome>();
  const problems: ResolveProblem[] = [];
  const reported = new Set<string>();

  function fail(name: string, problem: ResolveProblem): Outcome {
    if (!reported.has(name)) {
      reported.add(name);
      problems.push(problem);
    }
    return { ok: false };
  }

  /** A variable whose references are all settled: its value, or why it does not resolve. */
  function finish(name: string): void {
    if (outcomes.has(name)) return; // failed as a member of a cycle
    const entry = entries.get(name)!;
    if (entry.literal) {
      remember(name, { ok: true, value: entry.value, depth: 1 });
      return;
    }
    let depth = 1;
    let broken = false;
    const value = entry.value.replace(VALUE_REF_RE, (match: string, braced: string | undefined, bare: string | undefined) => {
      if (match === '\\$') return '$';
      const ref = referencedName(match, braced, bare, entries);
      if (ref === undefined) return match; // not a reference, or to a variable the .env does not define
      const outcome = outcomes.get(ref);
      if (outcome === undefined) return match;
      if (!outcome.ok) {
        broken = true;
        return match;
      }
      depth = Math.max(depth, outcome.depth + 1);
      return outcome.value;
    });
    if (broken) remember(name, { ok: false });
    else if (depth > maxDepth) remember(name, fail(name, { kind: 'depth', name, path: depthPath(name) }));
    else if (value.length > maxValueLength) remember(name, fail(name, { kind: 'too-large', name, length: value.length }));
    else remember(name, { ok: true, value, depth });
  }

  function remember(name: string, outcome: Outcome): Outcome {
    outcomes.set(name, outcome);
    return outcome;
  }

  // The longest chain of references from `name`, for the log line (names only, never values).
  function depthPath(name: string): string[] {
    const path = [name];
    let current = name;
    for (let i = 0; i <= maxDepth; i++) {
      let next: string | undefined;
      let best = 0;
      const entry = entries.get(current);
      if (!entry || entry.literal) break;
      for (const m of entry.value.matchAll(VALUE_REF_RE)) {
        const ref = m[1] ?? m[2];
        const outcome = ref === undefined ? undefined : outcomes.get(ref);
        if (ref !== undefined && outcome?.ok && outcome.depth > best) {
          best = outcome.depth;
          next = ref;
        }
      }
      if (next === undefined) break;
      path.push(next);
      current = next;
    }
    return path;
  }

  const values = new Map<string, string>();
  const unresolvable = new Set<string>();
  settleInOrder(entries.keys(), {
    references: (name) => referencesOf(entries.get(name)!, entries),
    isSettled: (name) => outcomes.has(name),
    settle: finish,
    // Every name on the loop fails; the ones above it on the stack fail through it.
    onCycle(path) {
      for (const member of path.slice(0, -1)) outcomes.set(member, fail(member, { kind: 'cycle', name: member, path }));
    },
  });
  for (const name of entries.keys()) {
    const outcome = outcomes.get(name);
    if (outcome?.ok) values.set(name, outcome.value);
    else unresolvable.add(name);
  }
  return { values, unresolvable, problems };
}
