import { isValidName } from './names';
import type { ResolvedEnv } from './resolve';

/** A result larger than this is refused (the config server's per-file limit, docs/config-server.md, "Limits", with room for growth). */
export const DEFAULT_MAX_OUTPUT_LENGTH = 16 * 1024 * 1024;

/** Options of {@link substitute}. */
export interface SubstituteOptions {
  /** Upper bound on the output length in UTF-16 code units. */
  maxOutputLength?: number;
}

/** What {@link substitute} produced. */
export interface SubstituteResult {
  text: string;
  /** Names referenced by the file that the `.env` does not define (kept as `${NAME}`). */
  missing: string[];
  /** Names defined but unresolvable (cycle, depth, size), kept as `${NAME}`. */
  unresolved: string[];
}

/** Thrown when the output would exceed its cap. */
export class SubstitutionLimitError extends RangeError {
  override readonly name = 'SubstitutionLimitError';
}

// An escaped placeholder `\${`, or `${...}` (content checked afterwards).
const FILE_REF_RE = /\\\$\{|\$\{([^}\n]*)\}/g;

/**
 * Replaces the `${NAME}` placeholders of a file (docs/config-server.md, "Variable substitution", rule 1) with resolved values.
 * Missing and unresolvable variables stay as `${NAME}` (rule 5); an invalid `${...}` stays as
 * written (rule 6); `\${` is a literal `${`. A bare `$NAME` in a file is text, not a placeholder.
 * Throws {@link SubstitutionLimitError} when the output would exceed `maxOutputLength`.
 */
export function substitute(text: string, env: ResolvedEnv, options: SubstituteOptions = {}): SubstituteResult {
  const maxOutputLength = options.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH;
  const missing = new Set<string>();
  const unresolved = new Set<string>();
  let growth = 0;
  const out = text.replace(FILE_REF_RE, (match, name: string | undefined) => {
    if (name === undefined) return '${';
    if (!isValidName(name)) return match;
    const value = env.values.get(name);
    if (value === undefined) {
      if (env.unresolvable.has(name)) unresolved.add(name);
      else missing.add(name);
      return match;
    }
    growth += value.length - match.length;
    if (text.length + growth > maxOutputLength) {
      throw new SubstitutionLimitError(`substituted output exceeds ${maxOutputLength} characters`);
    }
    return value;
  });
  return { text: out, missing: [...missing], unresolved: [...unresolved] };
}
