import { readInt, type Env, type EnvVariable } from '@repo/config';
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, defaultReserve, type ServerLimits } from './connection-limit';

/** Highest connection cap a setting may name. */
const MAX_CAP = 1_000_000;
/** Bounds of a deadline setting, ms: 0.1 s to an hour. */
const DEADLINE = { min: 100, max: 3_600_000 } as const;

/**
 * A connection cap setting (`MAX_CONNECTIONS`, `MAX_CONNECTIONS_PER_IP`, the relay's
 * `MAX_HTTP_…`/`MAX_WS_…`): an integer from 1 to 1,000,000, or from 0 when `noCap` is set (0 then
 * means no cap). One reader, so every service refuses the same values with the same message
 * (docs/README.md, "Limits and refusals").
 */
export function readConnectionCap(env: Env, name: string, fallback: number, options: { noCap?: boolean } = {}): number {
  return readInt(env, name, fallback, { min: options.noCap === true ? 0 : 1, max: MAX_CAP });
}

/** A service's own defaults of `HEADERS_TIMEOUT_MS` and `REQUEST_TIMEOUT_MS` (10 s and 30 s when not given). */
export interface DeadlineDefaults {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/** `HEADERS_TIMEOUT_MS` and `REQUEST_TIMEOUT_MS` (100 ms to an hour each; defaults 10 s and 30 s unless given). */
export function readDeadlines(env: Env, defaults: DeadlineDefaults = {}): Pick<ServerLimits, 'headersTimeoutMs' | 'requestTimeoutMs'> {
  return {
    headersTimeoutMs: readInt(env, 'HEADERS_TIMEOUT_MS', defaults.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, DEADLINE),
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', defaults.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, DEADLINE),
  };
}

/** Defaults of {@link readServerLimits}, the service's own figures. */
export interface ServerLimitDefaults extends DeadlineDefaults {
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** `MAX_CONNECTIONS=0` turns the global cap off (the per-address cap stays). */
  noGlobalCap?: boolean;
}

/**
 * The settings of a service's listener that {@link guardServer} applies: `MAX_CONNECTIONS`,
 * `MAX_CONNECTIONS_PER_IP`, `HEADERS_TIMEOUT_MS`, `REQUEST_TIMEOUT_MS`, with the service's defaults.
 */
export function readServerLimits(env: Env, defaults: ServerLimitDefaults): ServerLimits {
  return {
    maxConnections: readConnectionCap(env, 'MAX_CONNECTIONS', defaults.maxConnections, { noCap: defaults.noGlobalCap }),
    maxConnectionsPerIp: readConnectionCap(env, 'MAX_CONNECTIONS_PER_IP', defaults.maxConnectionsPerIp),
    ...readDeadlines(env, defaults),
  };
}

/**
 * What a service's listener makes of its deadlines, where it differs from the usual (`--help`
 * wording): the config server's TLS handshake counts in `HEADERS_TIMEOUT_MS`; the rpc-proxy
 * bounds only the receiving of a request, not its answer (a node call has `NODE_TIMEOUT_MS`).
 */
export interface DeadlineWording {
  headers?: string;
  request?: string;
}

/**
 * The `--help` rows of `HEADERS_TIMEOUT_MS` and `REQUEST_TIMEOUT_MS`, with the defaults
 * {@link readDeadlines} applies for the same `defaults`: one source, so the help cannot drift.
 */
export function deadlineVariables(defaults: DeadlineDefaults = {}, wording: DeadlineWording = {}): EnvVariable[] {
  return [
    {
      name: 'HEADERS_TIMEOUT_MS',
      default: String(defaults.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS),
      description: wording.headers ?? "a request's headers not received within this time: 408, connection closed",
    },
    {
      name: 'REQUEST_TIMEOUT_MS',
      default: String(defaults.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
      description: wording.request ?? 'a request not received (headers and body) or not answered within this time: 408',
    },
  ];
}

/**
 * The `--help` rows of the four settings {@link readServerLimits} reads, with the defaults it
 * applies for the same `defaults`, in the same words in every service.
 */
export function serverLimitVariables(defaults: ServerLimitDefaults, wording: DeadlineWording = {}): EnvVariable[] {
  const reserve = defaultReserve(defaults.maxConnections);
  return [
    {
      name: 'MAX_CONNECTIONS',
      default: String(defaults.maxConnections),
      description: `simultaneous connections in all, more closed at once; a tenth (${reserve}) kept for addresses with none open${
        defaults.noGlobalCap === true ? ' (0: no cap)' : ''
      }`,
    },
    {
      name: 'MAX_CONNECTIONS_PER_IP',
      default: String(defaults.maxConnectionsPerIp),
      description: 'simultaneous connections per client address (kept below MAX_CONNECTIONS minus the reserve), more closed at once',
    },
    ...deadlineVariables(defaults, wording),
  ];
}
