import { WebSocket } from 'ws';
import { backoff } from '@repo/service';
import { createMessage } from '@repo/relay-protocol';
import { peerTlsClientOptions } from '../peer-tls';
import { unregister } from './registry';
import { hostPort, type Dialer, type MeshState } from './types';

/** The advice logged when a peer refuses our handshake with `status`. */
export function refusalAdvice(status: number, meshTokenSource: string): string {
  if (status === 401 || status === 403) return `peer refused our mesh token: relays of one mesh share ${meshTokenSource}`;
  if (status === 503) return 'peer is at its connection limit or shutting down: it will be retried';
  if (status === 426 || status === 404) return 'the URL is not a relay WebSocket port: check RELAY_PEERS';
  return 'check RELAY_PEERS and the peer relay';
}

/** Dials `dialer` again after its backoff (exponential, equal jitter). */
function scheduleDial(mesh: MeshState, dialer: Dialer): void {
  const { options } = mesh;
  if (options.isClosed()) return;
  const { reconnectMinMs: minMs, reconnectMaxMs: maxMs } = options.timing;
  const delay = backoff(dialer.attempt, { minMs, maxMs, jitter: 'equal' });
  dialer.attempt++;
  dialer.timer = setTimeout(() => {
    dialer.timer = undefined;
    void dial(mesh, dialer);
  }, delay);
}

/** A dial failed (or a link closed): counted, logged once per distinct reason, retried. */
function dialFailed(mesh: MeshState, dialer: Dialer, reason: string, advice: string | undefined, wasLinked: boolean): void {
  const { options } = mesh;
  if (options.isClosed()) return;
  dialer.conn = undefined;
  if (!wasLinked) options.counters.peer_connect_failures++;
  if (dialer.lastError !== reason) {
    options.logger.warn({ peer_url: dialer.url, reason, ...(advice ? { advice } : {}) }, 'cannot reach peer relay; retrying with backoff');
    dialer.lastError = reason;
  }
  scheduleDial(mesh, dialer);
}

/** Dials a configured peer with the mesh token and says hello once open. */
export async function dial(mesh: MeshState, dialer: Dialer): Promise<void> {
  const { options } = mesh;
  if (options.isClosed()) return;
  const url = new URL(dialer.url);
  let tlsOptions;
  try {
    tlsOptions = await peerTlsClientOptions(url, options.peerTls);
  } catch (err) {
    dialFailed(mesh, dialer, (err as Error).message, undefined, false);
    return;
  }
  if (options.isClosed()) return;
  const ws = new WebSocket(dialer.url, {
    ...tlsOptions,
    headers: { Authorization: `Bearer ${options.meshToken}` },
    handshakeTimeout: Math.max(1_000, options.timing.syncTimeoutMs),
    maxPayload: options.limits.maxMessageBytes,
    perMessageDeflate: false,
  });
  const conn = options.openOutbound(ws, hostPort(url));
  mesh.dialerOf.set(conn, dialer);
  dialer.conn = conn;
  let failure = 'connection closed';
  let advice: string | undefined;
  ws.on('unexpected-response', (_req, res) => {
    const status = res.statusCode ?? 0;
    advice = refusalAdvice(status, options.meshTokenSource);
    failure = `peer answered HTTP ${status}: ${advice}`;
    res.resume();
    ws.terminate();
  });
  ws.on('error', (err) => {
    if (advice === undefined) failure = err.message;
  });
  let opened = false;
  ws.on('open', () => {
    opened = true;
    conn.sendMessage(createMessage('hello', { relay_id: options.relayId, version: options.version }));
  });
  ws.on('close', (code, reason) => {
    mesh.dialerOf.delete(conn);
    if (opened) failure = `closed with ${code}${reason.length > 0 ? ` (${reason.toString()})` : ''}`;
    const wasLinked = conn.peerId !== undefined;
    unregister(mesh, conn, failure);
    dialFailed(mesh, dialer, failure, advice, wasLinked);
  });
}
