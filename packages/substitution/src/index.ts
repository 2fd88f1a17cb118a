export { parseEnv, type ParsedEnv, type EnvEntry, type EnvIssue } from './parse-env';
export {
  resolveEnv,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_VALUE_LENGTH,
  type ResolvedEnv,
  type ResolveOptions,
  type ResolveProblem,
} from './resolve';
export { substitute, SubstitutionLimitError, DEFAULT_MAX_OUTPUT_LENGTH, type SubstituteOptions, type SubstituteResult } from './substitute';
export { isValidName } from './names';
export { resolvedLength } from './resolved-length';
