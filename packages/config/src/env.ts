import { existsSync } from 'node:fs';
import { config as dotenvConfig } from 'dotenv';

/** The environment a service reads its settings from (`process.env` in production). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A setting is missing or malformed: the message names the variable, never its value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Loads an optional `.env` file into `process.env` (variables already set win). Only
 * `KEY=VALUE` parsing, no expansion and no commands.
 */
export function loadDotEnvFile(path: string): boolean {
  if (!existsSync(path)) return false;
  dotenvConfig({ path, quiet: true, override: false });
  return true;
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A string setting, or `fallback` when unset or empty. */
export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

/** A string setting that may be absent. */
export function readOptional(env: Env, name: string): string | undefined {
  return raw(env, name);
}

/** An integer setting within [min, max]; throws ConfigError naming the variable otherwise. */
export function readInt(env: Env, name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
  const text = raw(env, name);
  if (text === undefined) return fallback;
  const min = range.min ?? Number.MIN_SAFE_INTEGER;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (!/^-?\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  }
  return Number(text);
}

/** A TCP port (0 to 65535; 0 asks the system for a free one). */
export function readPort(env: Env, name: string, fallback: number): number {
  return readInt(env, name, fallback, { min: 0, max: 65535 });
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

/** A boolean setting: 1/true/yes/on or 0/false/no/off. */
export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const text = raw(env, name)?.toLowerCase();
  if (text === undefined) return fallback;
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  throw new ConfigError(`${name} must be true or false`);
}

/** One of `values`. */
export function readEnum<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const text = raw(env, name);
  if (text === undefined) return fallback;
  if (!(values as readonly string[]).includes(text)) throw new ConfigError(`${name} must be one of ${values.join(', ')}`);
  return text as T;
}

/** The logger's levels (pino's), the values `LOG_LEVEL` may take. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `LOG_LEVEL` (default `info`): another value stops the start naming the variable and the levels. */
export function readLogLevel(env: Env): LogLevel {
  return readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info');
}

/** A comma-separated list (empty entries dropped). */
export function readList(env: Env, name: string, fallback: readonly string[] = []): string[] {
  const text = raw(env, name);
  if (text === undefined) return [...fallback];
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A hex string of exactly `bytes` bytes, or undefined when unset. */
export function readHex(env: Env, name: string, bytes: number): string | undefined {
  const text = raw(env, name);
  if (text === undefined) return undefined;
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(text)) {
    throw new ConfigError(`${name} must be ${bytes * 2} hex characters`);
  }
  return text.toLowerCase();
}
