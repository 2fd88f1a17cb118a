/**
 * Field kinds of the message table: each names a JSON shape and the TypeScript type derived from
 * it. A kind ending in `?` marks an optional field (absent is fine; present must match).
 */
export const FIELD_KINDS = [
  'string',
  'number',
  'integer',
  'non-negative integer',
  'non-negative integer or null',
  'boolean',
  'object',
  'array',
  'event types',
  'event types or all',
  'event id or time',
] as const;
/** One of {@link FIELD_KINDS}. */
export type FieldKind = (typeof FIELD_KINDS)[number];
/** A field of the table: its kind, `?`-suffixed when optional. */
export type FieldSpec = FieldKind | `${FieldKind}?`;

/** Longest message id accepted (ids are kept in the relay's de-duplication set and event log). */
export const MAX_ID_LENGTH = 128;

/** Describes a value for an error message without echoing it (it may be large or secret). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return `string of length ${value.length}`;
  if (typeof value === 'number' && !Number.isInteger(value)) return 'fractional number';
  return typeof value;
}

/** Splits a field spec into its kind and whether it is optional. */
export function splitFieldSpec(spec: FieldSpec): { kind: FieldKind; optional: boolean } {
  return spec.endsWith('?') ? { kind: spec.slice(0, -1) as FieldKind, optional: true } : { kind: spec as FieldKind, optional: false };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * True when `value` has the shape of `kind`. `isSubscriptionType` decides the members of
 * `event types` (passed in so this module does not depend on the table).
 */
export function matchesKind(kind: FieldKind, value: unknown, isSubscriptionType: (t: string) => boolean): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'non-negative integer':
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case 'non-negative integer or null':
      return value === null || (Number.isSafeInteger(value) && (value as number) >= 0);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'event types':
      return Array.isArray(value) && value.every((t) => typeof t === 'string' && isSubscriptionType(t));
    case 'event types or all':
      return value === 'all' || (Array.isArray(value) && value.every((t) => typeof t === 'string' && isSubscriptionType(t)));
    case 'event id or time':
      return (
        (typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH) ||
        (Number.isSafeInteger(value) && (value as number) >= 0)
      );
  }
}

/** What a kind expects, for error messages ("expected a non-negative integer"). */
export function expectedText(kind: FieldKind): string {
  switch (kind) {
    case 'event types':
      return 'an array of event types';
    case 'event types or all':
      return 'an array of event types or "all"';
    case 'event id or time':
      return `an event id (string of 1 to ${MAX_ID_LENGTH} characters) or a time (integer, ms since the Unix epoch)`;
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    case 'integer':
      return 'an integer';
    default:
      return `a ${kind}`;
  }
}
