import type { EnvEntry } from './parse-env';
import { referencedName, settleInOrder, VALUE_REF_RE } from './references';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUE_LENGTH, type ResolveOptions } from './resolve';

/** The outcome of one variable: its resolved value's length and depth; `ok` false when it does not resolve. */
interface Outcome {
  ok: boolean;
  length: number;
  depth: number;
}

/**
 * How many characters the values `resolveEnv(entries, options)` returns hold in all, computed from
 * the lengths alone, without building a value, in time proportional to the `.env`; counting stops
 * at the first variable that takes it past `limit` (the result is then past `limit`, not the
 * total). Same rules (docs/config-server.md, "Variable substitution") and the same walk
 * (`settleInOrder`): a variable on a cycle, deeper than `maxDepth` or longer than
 * `maxValueLength`, or referencing one that does not resolve, does not resolve and counts for
 * nothing. Iterative, as `resolveEnv` is: run this first on a `.env` you did not write.
 */
export function resolvedLength(entries: ReadonlyMap<string, EnvEntry>, limit: number, options: ResolveOptions = {}): number {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxValueLength = options.maxValueLength ?? DEFAULT_MAX_VALUE_LENGTH;
  const done = new Map<string, Outcome>();
  // Each variable's value split into what stays as written (its length) and the variables it references.
  const parts = new Map<string, { literal: number; refs: string[] }>();
  let total = 0;

  function partsOf(name: string): { literal: number; refs: string[] } {
    const entry = entries.get(name)!;
    const refs: string[] = [];
    let literal = entry.value.length;
    if (!entry.literal) {
      for (const m of entry.value.matchAll(VALUE_REF_RE)) {
        if (m[0] === '\\$') literal -= 1; // `\$` → `$`
        const ref = referencedName(m[0], m[1], m[2], entries);
        if (ref === undefined) continue; // kept as written
        literal -= m[0].length;
        refs.push(ref);
      }
    }
    const split = { literal, refs };
    parts.set(name, split);
    return split;
  }

  settleInOrder(entries.keys(), {
    references: (name) => partsOf(name).refs,
    isSettled: (name) => done.has(name),
    // As in resolveEnv, one that references a variable that does not resolve (or one on a cycle
    // with it, still open) does not resolve.
    settle(name) {
      const { literal, refs } = parts.get(name)!;
      let length = literal;
      let depth = 1;
      let broken = false;
      for (const ref of refs) {
        const outcome = done.get(ref);
        if (outcome?.ok !== true) broken = true;
        else {
          length += outcome.length;
          depth = Math.max(depth, outcome.depth + 1);
        }
      }
      const ok = !broken && depth <= maxDepth && length <= maxValueLength;
      done.set(name, { ok, length, depth });
      if (ok) total += length;
      return total > limit;
    },
  });
  return total;
}
