import { isValidName } from './names';
import type { EnvEntry } from './parse-env';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUE_LENGTH, VALUE_REF_RE, type ResolveOptions } from './resolve';

/** The outcome of one variable: its resolved value's length and depth; `ok` false when it does not resolve. */
interface Outcome {
  ok: boolean;
  length: number;
  depth: number;
}

/** A reference in a value: the text it replaces and the variable it names. */
interface Ref {
  text: string;
  name: string;
}

/**
 * How many characters the values `resolveEnv(entries, options)` returns hold in all, computed from
 * the lengths alone, without building a value, in time proportional to the `.env`; counting stops
 * at the first variable that takes it past `limit` (the result is then past `limit`, not the
 * total). Same rules (docs/config-server.md, "Variable substitution"): a variable on a cycle,
 * deeper than `maxDepth` or longer than `maxValueLength`, or referencing one that does not
 * resolve, does not resolve and counts for nothing. Iterative, as `resolveEnv` is: run this first
 * on a `.env` you did not write.
 */
export function resolvedLength(entries: ReadonlyMap<string, EnvEntry>, limit: number, options: ResolveOptions = {}): number {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxValueLength = options.maxValueLength ?? DEFAULT_MAX_VALUE_LENGTH;
  const done = new Map<string, Outcome>();
  const active = new Set<string>();
  let total = 0;

  function refsOf(entry: EnvEntry): { literal: number; refs: Ref[] } {
    if (entry.literal) return { literal: entry.value.length, refs: [] };
    const refs: Ref[] = [];
    let literal = entry.value.length;
    for (const m of entry.value.matchAll(VALUE_REF_RE)) {
      if (m[0] === '\\$') {
        literal -= 1; // `\$` → `$`
        continue;
      }
      const name = m[1] ?? m[2];
      if (name === undefined || !isValidName(name) || !entries.has(name)) continue; // kept as written
      literal -= m[0].length;
      refs.push({ text: m[0], name });
    }
    return { literal, refs };
  }

  for (const root of entries.keys()) {
    if (done.has(root)) continue;
    const stack: { name: string; literal: number; refs: Ref[]; next: number }[] = [];
    const push = (name: string) => {
      active.add(name);
      stack.push({ name, ...refsOf(entries.get(name)!), next: 0 });
    };
    push(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.refs.length) {
        const ref = top.refs[top.next]!;
        if (!done.has(ref.name) && !active.has(ref.name)) {
          push(ref.name);
          continue;
        }
        top.next++;
        continue;
      }
      // Every reference settled: this variable's outcome. As in resolveEnv, one that references a
      // variable that does not resolve (or one on a cycle with it, still open) does not resolve.
      let length = top.literal;
      let depth = 1;
      let broken = false;
      for (const ref of top.refs) {
        const outcome = done.get(ref.name);
        if (outcome?.ok !== true) broken = true;
        else {
          length += outcome.length;
          depth = Math.max(depth, outcome.depth + 1);
        }
      }
      const ok = !broken && depth <= maxDepth && length <= maxValueLength;
      done.set(top.name, { ok, length, depth });
      active.delete(top.name);
      stack.pop();
      if (ok) total += length;
      if (total > limit) return total;
    }
  }
  return total;
}
