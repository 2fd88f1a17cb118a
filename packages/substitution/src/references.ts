import { isValidName } from './names';
import type { EnvEntry } from './parse-env';

/** In a value: an escaped dollar, `${...}` (its content checked afterwards), or `$NAME`. */
export const VALUE_REF_RE = /\\\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * The variable a match of {@link VALUE_REF_RE} (its text and groups) references, when it is one the `.env` defines;
 * undefined for `\$`, an invalid `${...}` or a name the `.env` does not define (kept as written).
 */
export function referencedName(
  text: string,
  braced: string | undefined,
  bare: string | undefined,
  entries: ReadonlyMap<string, EnvEntry>,
): string | undefined {
  if (text === '\\$') return undefined;
  if (braced !== undefined && !isValidName(braced)) return undefined;
  const name = braced ?? bare!;
  return entries.has(name) ? name : undefined;
}

/** The `.env` variables an entry's value references, in the order written (none for a literal). */
export function* referencesOf(entry: EnvEntry, entries: ReadonlyMap<string, EnvEntry>): Generator<string> {
  if (entry.literal) return;
  for (const match of entry.value.matchAll(VALUE_REF_RE)) {
    const name = referencedName(match[0], match[1], match[2], entries);
    if (name !== undefined) yield name;
  }
}

/** What {@link settleInOrder} asks of its caller. */
export interface SettleSteps {
  /** The variables `name` references, in the order written (asked once, when `name` is opened). */
  references(name: string): Iterable<string>;
  /** Whether `name` already has its outcome (it is then neither opened nor settled again). */
  isSettled(name: string): boolean;
  /**
   * Every variable `name` references is settled, or open on a cycle through `name`: give `name`
   * its outcome. Returning true stops the walk.
   */
  settle(name: string): boolean | void;
  /** A reference closes a loop: `loop` runs from the referenced variable to the referencing one, then the referenced one again. */
  onCycle?(loop: string[]): void;
}

/**
 * Settles each of `roots` and what it references, depth first in the order the references are
 * written, each variable after those it references: the one walk of `resolveEnv` and
 * `resolvedLength`. Iterative (an explicit stack), so a chain of any length cannot exhaust the
 * call stack.
 */
export function settleInOrder(roots: Iterable<string>, steps: SettleSteps): void {
  const stack: string[] = [];
  const pending: Iterator<string>[] = [];
  const position = new Map<string, number>();
  const open = (name: string) => {
    position.set(name, stack.push(name) - 1);
    pending.push(steps.references(name)[Symbol.iterator]());
  };
  for (const root of roots) {
    if (steps.isSettled(root)) continue;
    open(root);
    while (stack.length > 0) {
      const next = pending[pending.length - 1]!.next();
      if (!next.done) {
        const ref = next.value;
        if (steps.isSettled(ref)) continue;
        const at = position.get(ref);
        if (at === undefined) open(ref);
        else steps.onCycle?.([...stack.slice(at), ref]);
        continue;
      }
      pending.pop();
      const name = stack.pop()!;
      position.delete(name);
      if (steps.settle(name) === true) return;
    }
  }
}
