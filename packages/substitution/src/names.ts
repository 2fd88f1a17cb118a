/** A variable name: a letter or underscore, then letters, digits or underscores (POSIX shell rules). */
export const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Returns true when `name` is a valid variable name. */
export function isValidName(name: string): boolean {
  return NAME_RE.test(name);
}
