import type { Scope } from '@repo/relay-protocol';
import { createFanOut } from '../src/fan-out';
import type { Connection } from '../src/connection';
import { refusalAdvice } from '../src/mesh';
import { createCounters, healthRecord, metricsRecord, statusRecord, syncData, type RelaySnapshot } from '../src/status';
import { authorize, requestToken, type Credentials } from '../src/upgrade';

const PUBLISH = 'publish-token-0123456789';
const MESH = 'mesh-token-0123456789abc';
const AUTH = 'auth-token-0123456789abc';
const WALLET = 'wallet-token-0123456789ab';

const credentials = (over: Partial<Credentials> = {}): Credentials => ({
  publishToken: PUBLISH,
  meshToken: MESH,
  authToken: undefined,
  clientToken: (t) => (t === WALLET ? { name: 'wallet', scopes: new Set<Scope>(['events', 'payments']) } : undefined),
  paymentsPublic: false,
  ...over,
});
const scopesOf = (token: string | undefined, over: Partial<Credentials> = {}) => {
  const auth = authorize(token, credentials(over));
  return auth.ok ? [...auth.roles.scopes].sort() : 'refused';
};

describe('requestToken', () => {
  it.each([
    [{ authorization: 'Bearer abc' }, '/', 'abc'],
    [{ authorization: 'bearer   abc ' }, '/', 'abc'],
    [{ authorization: 'Basic abc' }, '/', ''],
    [{}, '/?token=q1', 'q1'],
    [{}, '/?other=1', undefined],
    [{ authorization: 'Bearer h' }, '/?token=q', 'h'],
  ])('reads %j %s as %p', (headers, url, token) => {
    expect(requestToken({ headers, url })).toBe(token);
  });
});

describe('authorize', () => {
  it('gives publishers and peers every scope and their role', () => {
    expect(authorize(PUBLISH, credentials())).toMatchObject({ ok: true, roles: { publisher: true, meshAllowed: false } });
    expect(authorize(MESH, credentials())).toMatchObject({ ok: true, roles: { publisher: false, meshAllowed: true } });
    expect(scopesOf(PUBLISH)).toEqual(['events', 'payments']);
  });

  it('keeps payment events from anonymous clients and RELAY_AUTH_TOKEN holders unless they are public', () => {
    expect(scopesOf(undefined)).toEqual(['events']);
    expect(scopesOf(AUTH, { authToken: AUTH })).toEqual(['events']);
    expect(scopesOf(undefined, { paymentsPublic: true })).toEqual(['events', 'payments']);
  });

  it('gives a token-file token its scopes and its name', () => {
    expect(authorize(WALLET, credentials())).toMatchObject({ ok: true, roles: { tokenName: 'wallet' } });
    expect(scopesOf(WALLET)).toEqual(['events', 'payments']);
  });

  it('refuses a token that matches nothing, and no token when RELAY_AUTH_TOKEN is set', () => {
    expect(scopesOf('wrong-token-0000000000')).toBe('refused');
    expect(scopesOf('')).toBe('refused');
    expect(scopesOf(undefined, { authToken: AUTH })).toBe('refused');
    expect(scopesOf(WALLET, { authToken: AUTH })).toEqual(['events', 'payments']);
  });
});

describe('status records', () => {
  const counters = { ...createCounters(), messages_sent: 7, messages_received: 3, sync_errors: 1 };
  const s: RelaySnapshot = {
    relayId: 'r1',
    version: '1.0.0',
    uptime: 12,
    connectedRelays: 2,
    connectedClients: 5,
    lastBlockHeight: 800,
    configuredPeers: 3,
    linkedConfiguredPeers: 2,
    counters,
  };

  it('builds the sync messages from one snapshot', () => {
    expect(syncData('StateSync', s)).toEqual({
      relay_id: 'r1',
      state: 'running',
      version: '1.0.0',
      uptime: 12,
      connected_relays: 2,
      last_block_height: 800,
    });
    expect(syncData('MetricsSync', s)).toEqual({
      relay_id: 'r1',
      messages_sent: 7,
      messages_received: 3,
      sync_errors: 1,
      connected_relays: 2,
    });
    expect(syncData('HealthSync', s, { cpu_usage: 1.5, memory_usage: 2, memory_rss_bytes: 10, heap_used_bytes: 5 })).toMatchObject({
      status: 'healthy',
      cpu_usage: 1.5,
    });
  });

  it('gives health, status and metrics, with mesh_health the share of configured peers linked', () => {
    expect(healthRecord(s)).toEqual({ status: 'healthy', relay_id: 'r1', uptime: 12, version: '1.0.0', connected_relays: 2 });
    expect(statusRecord(s)).toMatchObject({
      sync_metrics: { messages_sent: 7, messages_received: 3, sync_errors: 1 },
      connected_clients: 5,
    });
    expect(metricsRecord(s).mesh_health).toBe(0.667);
    expect(metricsRecord({ ...s, configuredPeers: 0, linkedConfiguredPeers: 0 }).mesh_health).toBe(1);
  });
});

describe('refusalAdvice', () => {
  it('names the variable the mesh token comes from on a 401', () => {
    expect(refusalAdvice(401, 'RELAY_MESH_TOKEN')).toBe('peer refused our mesh token: relays of one mesh share RELAY_MESH_TOKEN');
    expect(refusalAdvice(503, 'RELAY_MESH_TOKEN')).toMatch(/connection limit/);
    expect(refusalAdvice(426, 'RELAY_MESH_TOKEN')).toMatch(/RELAY_PEERS/);
  });
});

describe('createFanOut', () => {
  /** A stand-in connection recording what it was sent. */
  const fake = (over: Partial<Record<'isClient' | 'peerId', unknown>> & { wants?: (t: string) => boolean }) => {
    const sent: string[] = [];
    const conn = {
      isClient: over.isClient ?? true,
      peerId: over.peerId,
      wants: over.wants ?? (() => true),
      sendLive: (frame: Buffer) => sent.push(frame.toString()) > 0,
      send: (frame: Buffer) => sent.push(frame.toString()) > 0,
    } as unknown as Connection;
    return { conn, sent };
  };

  it('sends to the clients that want the type and to every peer but the one it came from, once each', () => {
    const all = fake({});
    const blocksOnly = fake({ wants: (t) => t === 'BlockScanned' });
    const peerA = fake({ isClient: false, peerId: 'a' });
    const peerB = fake({ isClient: false, peerId: 'b' });
    const conns = new Set([all.conn, blocksOnly.conn, peerA.conn, peerB.conn]);
    const fanOut = createFanOut(conns, { linkOf: (id) => [...conns].find((c) => c.peerId === id) });
    const event = { type: 'TransactionReceived', id: 'e1', timestamp: 1, data: {} };
    expect(fanOut.send(event, { type: 'TransactionReceived', toPeers: true, fromPeer: 'a' })).toBe(2);
    expect(all.sent).toEqual([JSON.stringify(event)]);
    expect(blocksOnly.sent).toEqual([]);
    expect(peerA.sent).toEqual([]);
    expect(peerB.sent).toEqual([JSON.stringify(event)]);
    fanOut.send(event, { type: 'StateSync', toPeers: false });
    expect(peerB.sent).toHaveLength(1);
  });
});
