import { isValidName } from './names';
import type { EnvEntry } from './parse-env';

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

/** In a value: an escaped dollar, `${...}` (its content checked afterwards), or `$NAME`. */
export const VALUE_REF_RE = /\\\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

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
  // The variables being resolved, outermost first, and where each stands in it.
  const stack: string[] = [];
  const onStack = new Map<string, number>();

  function fail(name: string, problem: ResolveProblem): Outcome {
    if (!reported.has(name)) {
      reported.add(name);
      problems.push(problem);
    }
    return { ok: false };
  }

  /**
   * Resolves `root` and what it references, depth first in the order the references are written,
   * with an explicit stack (a chain of any length cannot exhaust the call stack): a variable is
   * finished once every variable it references is (or is found on a cycle with it).
   */
  function resolve(root: string): void {
    if (!entries.has(root) || outcomes.has(root)) return;
    const frames: { name: string; refs: IterableIterator<RegExpMatchArray> }[] = [];
    const open = (name: string) => {
      const entry = entries.get(name)!;
      if (entry.literal) {
        remember(name, { ok: true, value: entry.value, depth: 1 });
        return;
      }
      onStack.set(name, stack.push(name) - 1);
      frames.push({ name, refs: entry.value.matchAll(VALUE_REF_RE) });
    };
    open(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const next = frame.refs.next();
      if (!next.done) {
        const ref = referenced(next.value);
        if (ref === undefined || outcomes.has(ref)) continue;
        const at = onStack.get(ref);
        if (at === undefined) {
          open(ref);
          continue;
        }
        // Every name on the loop fails; the ones above it on the stack fail through it.
        const path = [...stack.slice(at), ref];
        for (const member of stack.slice(at)) outcomes.set(member, fail(member, { kind: 'cycle', name: member, path }));
        continue;
      }
      frames.pop();
      onStack.delete(stack.pop()!);
      finish(frame.name);
    }
  }

  /** The variable a reference names, when it is one of the `.env`'s (others are kept as written). */
  function referenced(match: RegExpMatchArray): string | undefined {
    const [text, braced, bare] = match;
    if (text === '\\$') return undefined;
    if (braced !== undefined && !isValidName(braced)) return undefined;
    const ref = braced ?? bare!;
    return entries.has(ref) ? ref : undefined;
  }

  /** A variable whose references are all settled: its value, or why it does not resolve. */
  function finish(name: string): void {
    if (outcomes.has(name)) return; // failed as a member of a cycle
    let depth = 1;
    let broken = false;
    const value = entries.get(name)!.value.replace(VALUE_REF_RE, (match: string, braced: string | undefined, bare: string | undefined) => {
      if (match === '\\$') return '$';
      if (braced !== undefined && !isValidName(braced)) return match;
      const outcome = outcomes.get(braced ?? bare!);
      if (outcome === undefined) return match; // missing
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
  for (const name of entries.keys()) {
    resolve(name);
    const outcome = outcomes.get(name);
    if (outcome?.ok) values.set(name, outcome.value);
    else unresolvable.add(name);
  }
  return { values, unresolvable, problems };
}
