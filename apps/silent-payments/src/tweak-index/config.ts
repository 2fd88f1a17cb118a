import { join } from 'node:path';
import { ConfigError, readBool, readInt, readOptional, readPort, type Env } from '@repo/config';
import { defaultRemoteScanWorkers } from './remote-scan/scan-pool';

/** The SQLite file of the index under DATA_DIR (when DATABASE_URL is unset). */
export const INDEX_DATABASE_FILE = 'tweak-index.sqlite';

/** Settings of the light-wallet tweak index and its protocols (docs/silent-payments.md, "The tweak index (light wallets)"). */
export interface TweakIndexConfig {
  /** INDEX_ENABLED (default false). */
  enabled: boolean;
  /** SP_INDEX_START_HEIGHT; undefined: the scanner's start height. */
  startHeight: number | undefined;
  /** INDEX_GRPC_PORT (7001, BlindBit's). */
  grpcPort: number;
  /** ELECTRUM_PORT (60601, electrs's signet port). */
  electrumPort: number;
  /** ELECTRUM_TLS_PORT (60602, electrs's signet TLS port), served when TLS_CERT_FILE and TLS_KEY_FILE are set; undefined without them. */
  electrumTlsPort: number | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** DATABASE_URL (PostgreSQL); undefined: SQLite at {@link sqliteFile}. */
  databaseUrl: string | undefined;
  sqliteFile: string;
  /** REMOTE_SCAN_WORKERS (default: one a core): the worker threads of the remote scan (Frigate's methods). */
  remoteScanWorkers: number;
}

/** Reads the index's variables from the same environment as the service's `loadConfig`. */
export function loadTweakIndexConfig(env: Env, dataDir: string): TweakIndexConfig {
  const databaseUrl = readOptional(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const tlsCertFile = readOptional(env, 'TLS_CERT_FILE');
  const tlsKeyFile = readOptional(env, 'TLS_KEY_FILE');
  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined))
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  if (readOptional(env, 'ELECTRUM_TLS_PORT') !== undefined && tlsCertFile === undefined) {
    throw new ConfigError('ELECTRUM_TLS_PORT needs TLS_CERT_FILE and TLS_KEY_FILE');
  }
  return {
    enabled: readBool(env, 'INDEX_ENABLED', false),
    startHeight:
      readOptional(env, 'SP_INDEX_START_HEIGHT') === undefined
        ? undefined
        : readInt(env, 'SP_INDEX_START_HEIGHT', 0, { min: 0, max: 100_000_000 }),
    grpcPort: readPort(env, 'INDEX_GRPC_PORT', 7001),
    electrumPort: readPort(env, 'ELECTRUM_PORT', 60601),
    electrumTlsPort: tlsCertFile === undefined ? undefined : readPort(env, 'ELECTRUM_TLS_PORT', 60602),
    tlsCertFile,
    tlsKeyFile,
    databaseUrl,
    sqliteFile: join(dataDir, INDEX_DATABASE_FILE),
    remoteScanWorkers: readInt(env, 'REMOTE_SCAN_WORKERS', defaultRemoteScanWorkers(), { min: 1, max: 64 }),
  };
}
