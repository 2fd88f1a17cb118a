import { join } from 'node:path';
import { packageVersion, type CommandSpec } from '@repo/config';
import { serverLimitVariables } from '@repo/http';
import { SERVER_LIMIT_DEFAULTS } from './config';

/**
 * The entry point's command line: `--help` (usage and every environment variable with its
 * default: the README's configuration table) and `--version`; anything else is refused (exit 2).
 */
export const COMMAND: CommandSpec = {
  name: 'config-server',
  version: packageVersion(join(__dirname, '..', 'package.json')),
  summary: 'the encrypted configuration file server (HTTPS)',
  usage: [''],
  env: [
    { name: 'HOST', default: '127.0.0.1', description: 'address to bind (0.0.0.0 in containers)' },
    { name: 'PORT', default: '6666', description: 'HTTPS port' },
    {
      name: 'HTTPS_ALT_PORT',
      default: 'unset',
      description: "a second HTTPS port, same service (6443 in compose): fetch and browsers refuse 6666, a Fetch standard 'bad port'",
    },
    { name: 'PUBLIC_DOMAIN', default: 'localhost', description: 'host name reported by GET /info' },
    { name: 'DATA_DIR', default: 'apps/config-server/data', description: 'generated master key and certificate' },
    { name: 'STORAGE_DIR', default: "the repository's storage/", description: 'storage/<env>/<file> and storage/<env>/.env' },
    {
      name: 'KEYS_DIR',
      default: 'DATA_DIR/keys',
      description: "<env>.key (64 hex characters) is that environment's key and wins over derivation; re-read when it changes",
    },
    {
      name: 'CLIENT_KEYS_DIR',
      default: 'KEYS_DIR/clients',
      description: 'registered client public keys for recipient mode: <env>/<name>.pub (see below)',
    },
    {
      name: 'CLIENT_KEYS_RECHECK_MS',
      default: '1000',
      description: "how often an environment's client key folder is looked at again (0 to 60000)",
    },
    {
      name: 'CONFIG_MASTER_KEY',
      default: 'generated into DATA_DIR/master.key',
      description: '64 hex characters; environment keys are HKDF-SHA256(master, info config-server/v1/env/<env>)',
    },
    { name: 'TLS_CERT_FILE, TLS_KEY_FILE', default: 'generated self-signed', description: 'PEM certificate and key (both or neither)' },
    { name: 'RATE_LIMIT_PER_MINUTE', default: '100', description: 'requests per minute per client address (0: off)' },
    { name: 'RATE_LIMIT_PER_SECOND', default: '10', description: 'burst: requests per second per client address (0: off)' },
    ...serverLimitVariables(SERVER_LIMIT_DEFAULTS, {
      headers: "the TLS handshake, then a request's headers, not done within this time: connection closed (during the handshake) or 408",
    }),
    {
      name: 'MAX_FILE_BYTES',
      default: '10485760',
      description: 'largest file served (checked before reading), and largest substituted output',
    },
    { name: 'MAX_REQUEST_BYTES', default: '1048576', description: 'largest request body (no endpoint takes one)' },
    { name: 'MAX_IN_FLIGHT', default: '256', description: 'requests in progress at once before 503 (overload)' },
    {
      name: 'FILE_CACHE_MS',
      default: '1000',
      description: 'a rendered file is reused this long before the disk is read again (0: always read)',
    },
    {
      name: 'CONFIG_VERSION_KEY',
      default: 'generated into DATA_DIR/version.key',
      description: '64 hex characters: the key versions are computed under (see "Versions"); replicas serving the same files must share it',
    },
    {
      name: 'VERSION_HISTORY_MAX',
      default: '20',
      description: 'versions kept per file in DATA_DIR/history for ?version= (1 to 10000); the least recently current go first',
    },
    {
      name: 'WATCH_POLL_MS',
      default: '500',
      description:
        'while clients wait on a file, how often it and its .env are also checked with stat, in case a file system event is missed (50 to 60000)',
    },
    { name: 'MAX_WAITING', default: '10000', description: '?wait= requests held at once, server-wide; past it 503' },
    { name: 'AUDIT_LOG_FILE', default: 'DATA_DIR/audit.log', description: 'the audit log (JSON lines, mode 0600), see "Audit log"' },
    {
      name: 'AUDIT_LOG_MAX_BYTES',
      default: '10485760',
      description: 'rotate the audit log when a line would take it past this size (at least 1024)',
    },
    { name: 'AUDIT_LOG_KEEP', default: '5', description: 'rotated audit files kept: audit.log.1 (newest) to audit.log.5; 0 keeps none' },
    { name: 'MAINTENANCE_MODE', default: 'false', description: 'start in maintenance' },
    { name: 'LOG_LEVEL', default: 'info', description: 'pino level' },
    {
      name: 'TRUST_PROXY',
      default: '(none)',
      description:
        "proxies whose X-Forwarded-For and X-Request-Id are believed: a hop count or comma-separated addresses/CIDRs (express's trust proxy; docs/README.md, Trusted proxies)",
    },
  ],
};
