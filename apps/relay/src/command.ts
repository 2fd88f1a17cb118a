import { join } from 'node:path';
import { packageVersion, type CommandSpec } from '@repo/config';
import { deadlineVariables } from '@repo/http';
import { DEFAULT_LIMITS } from './config';

/**
 * The entry point's command line: `--help` (usage and every environment variable with its
 * default: the README's configuration table) and `--version`; anything else is refused (exit 2).
 */
export const COMMAND: CommandSpec = {
  name: 'relay',
  version: packageVersion(join(__dirname, '..', 'package.json')),
  summary: 'the event relay (WebSocket and HTTP API)',
  usage: [''],
  env: [
    { name: 'HOST', default: '127.0.0.1', description: 'address both servers bind (0.0.0.0 in containers)' },
    { name: 'DATA_DIR', default: 'apps/relay/data', description: 'relay id, generated publish token, events.db (the SQLite event log)' },
    { name: 'LOG_LEVEL', default: 'info', description: 'pino level' },
    { name: 'WS_PORT', default: '8090', description: 'WebSocket port' },
    { name: 'HTTP_PORT', default: '8091', description: 'HTTP API port' },
    {
      name: 'RELAY_ID',
      default: 'generated once (relay-<12 hex>) into DATA_DIR/relay-id',
      description: "this relay's id: 1\u201364 of A-Za-z0-9._:-",
    },
    { name: 'RELAY_PEERS', default: 'none', description: 'comma-separated ws:// / wss:// URLs of peer relays' },
    {
      name: 'RELAY_AUTH_TOKEN',
      default: 'none (open relay)',
      description: 'when set, every WebSocket upgrade needs it (Authorization: Bearer <t> or ?token=<t>), else 401',
    },
    {
      name: 'RELAY_PUBLISH_TOKEN',
      default: 'generated into DATA_DIR/publish-token',
      description: 'token of the silent-payment service (see "Publishing"); also admits the connection when RELAY_AUTH_TOKEN is set',
    },
    {
      name: 'RELAY_MESH_TOKEN',
      default: 'the publish token',
      description: 'token relays present to each other (Bearer on the upgrade); a relay in a mesh needs the same mesh token as its peers',
    },
    {
      name: 'RELAY_TOKEN_FILE',
      default: 'none',
      description: 'file of client tokens with names and scopes (see "Client tokens"); re-read when it changes',
    },
    { name: 'RELAY_TOKEN_FILE_INTERVAL_MS', default: '1000', description: "how often the token file's modification time is checked" },
    {
      name: 'RELAY_PAYMENTS_PUBLIC',
      default: 'false',
      description: 'true: payment events go to every client, whatever its token (logged as a warning at start)',
    },
    {
      name: 'RELAY_EVENT_STORE',
      default: 'sqlite',
      description: 'the event log: sqlite (DATA_DIR/events.db) or redis (a Redis stream, for relays behind a balancer sharing one log)',
    },
    {
      name: 'REDIS_URL',
      default: 'redis://127.0.0.1:6379',
      description: 'the Redis of RELAY_EVENT_STORE=redis (redis:// or rediss://, never logged)',
    },
    {
      name: 'REDIS_KEY_PREFIX',
      default: 'relay:',
      description: "prefix of the relay's Redis keys (<prefix>events, <prefix>id:<event id>, <prefix>meta)",
    },
    { name: 'RELAY_RETENTION_MS', default: '604800000 (7 days)', description: 'events older than this are removed from the log' },
    { name: 'RELAY_RETENTION_EVENTS', default: '1000000', description: 'at most this many events are kept (the oldest removed first)' },
    {
      name: 'RELAY_HEAL_OVERLAP_MS',
      default: '5000',
      description: "a heal starts this long before the peer's last confirmed time (covers clock differences; the overlap is de-duplicated)",
    },
    { name: 'TLS_CERT_FILE, TLS_KEY_FILE', default: 'none', description: 'serve the WebSocket as wss (both or neither)' },
    {
      name: 'RELAY_PEER_CA_FILE',
      default: 'none',
      description: 'PEM CA (or self-signed certificate) trusted for wss:// peers; host name checked',
    },
    {
      name: 'RELAY_PEER_FINGERPRINT',
      default: 'none',
      description:
        'comma-separated SHA-256 certificate fingerprints pinned for wss:// peers (AB:CD:\u2026 or plain hex); wins over the CA file',
    },
    {
      name: 'MAX_WS_CONNECTIONS',
      default: '1000',
      description: "simultaneous WebSocket connections (the interface's limit); past it the upgrade gets 503",
    },
    {
      name: 'MAX_WS_CONNECTIONS_PER_IP',
      default: '100',
      description: 'TCP connections to the WebSocket listener per client address; more are closed at once',
    },
    { name: 'MAX_MESSAGE_BYTES', default: '1048576', description: 'largest WebSocket message (spec: 1 MB)' },
    {
      name: 'MAX_CLIENT_MESSAGE_BYTES',
      default: '16384',
      description: 'largest message a client without the publish or mesh token may send; past it closed with 1009',
    },
    {
      name: 'CLIENT_MESSAGES_PER_SECOND, CLIENT_MESSAGES_PER_SECOND_PER_IP',
      default: '20 / 100',
      description:
        'messages a client connection, and the clients of one address together, may send per second; past it dropped unread (RATE_LIMITED)',
    },
    {
      name: 'IDLE_CLIENT_TIMEOUT_MS',
      default: '60000',
      description: 'a client without a token that has not subscribed to at least one type by then is closed with 1008 (0: never)',
    },
    {
      name: 'MAX_SEND_BUFFER_BYTES',
      default: '4194304',
      description: 'data queued for one client before it is disconnected as a slow consumer',
    },
    {
      name: 'SLOW_CONSUMER_GRACE_MS',
      default: '1000',
      description: "after the close frame, how long before a slow consumer's socket is cut",
    },
    {
      name: 'HEARTBEAT_INTERVAL_MS',
      default: '30000',
      description: 'WebSocket ping interval (spec: 30 s); no pong within one interval: terminated',
    },
    { name: 'SYNC_INTERVAL_MS', default: '30000', description: 'period of StateSync, HealthSync and MetricsSync' },
    {
      name: 'RELAY_RECONNECT_MIN_MS, RELAY_RECONNECT_MAX_MS',
      default: '500 / 30000',
      description: 'peer reconnection backoff (exponential, equal jitter)',
    },
    {
      name: 'RELAY_SYNC_TIMEOUT_MS',
      default: '5000',
      description: "how long POST /sync waits for a peer's answer (also the peer handshake timeout, at least 1 s)",
    },
    {
      name: 'RELAY_DEDUP_MAX_IDS, RELAY_DEDUP_TTL_MS',
      default: '100000 / 600000',
      description: 'the seen-id set: at most this many ids, each kept this long',
    },
    { name: 'RATE_LIMIT_PER_MINUTE', default: '200', description: 'HTTP requests per minute per address (spec)' },
    { name: 'MAX_BODY_BYTES', default: '5242880', description: 'HTTP request body (spec: 5 MB)' },
    { name: 'MAX_HTTP_CONNECTIONS', default: '100', description: 'simultaneous HTTP connections (spec), also the requests in flight' },
    {
      name: 'MAX_HTTP_CONNECTIONS_PER_IP',
      default: '20',
      description: 'HTTP API connections per client address (a tenth of MAX_HTTP_CONNECTIONS is kept for new addresses)',
    },
    {
      name: 'MAX_CONCURRENT_BODIES',
      default: '8',
      description: 'HTTP request bodies read at once (2 for one address); past it 503 with Retry-After: 1',
    },
    ...deadlineVariables(DEFAULT_LIMITS, {
      headers: 'request headers (HTTP API and WebSocket upgrades) and the TLS handshake of wss not done within this time: 408, or closed',
    }),
    {
      name: 'TRUST_PROXY',
      default: '(none)',
      description:
        "proxies whose X-Forwarded-For and X-Request-Id are believed: a hop count or comma-separated addresses/CIDRs (express's trust proxy; docs/README.md, Trusted proxies)",
    },
  ],
};
