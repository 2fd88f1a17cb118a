import { createHash } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import type { Envelope } from '@repo/relay-protocol';
import { lookupToken, parseTokenFile, TokenFileError } from '../src/token-file';
import {
  EVENTS_TOKEN,
  PUBLISH_TOKEN,
  TestClient,
  WALLET,
  WALLET_TOKEN,
  blockEvent,
  connect,
  createRecordingLogger,
  publishAll,
  removeTempDirs,
  startRelay,
  tempDir,
  transactionEvent,
  waitFor,
  writeTokenFile,
  type TestRelay,
} from './support/helpers';

const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });

describe('parseTokenFile', () => {
  it('reads names, scopes and tokens given plain or as their SHA-256, skipping comments', () => {
    const hash = createHash('sha256').update('hashed-token-0123456789').digest('hex');
    const entries = parseTokenFile(`# name scopes token\n\nwallet events,payments ${WALLET_TOKEN}\n  board events sha256:${hash}  \n`);
    expect(entries.map((e) => [e.name, [...e.scopes]])).toEqual([
      ['wallet', ['events', 'payments']],
      ['board', ['events']],
    ]);
    expect(lookupToken(entries, WALLET_TOKEN)?.name).toBe('wallet');
    expect(lookupToken(entries, 'hashed-token-0123456789')?.name).toBe('board');
    expect(lookupToken(entries, 'nobody-0123456789abcdef')).toBeUndefined();
  });

  it.each([
    ['wallet events', /line 1: expected "<name> <scopes> <token>", got 2/],
    ['wallet everything secret-token-0123456789', /line 1 \(wallet\): unknown scope "everything"/],
    ['wallet events short', /line 1 \(wallet\): token must be 16 to 512 characters/],
    [`a events ${WALLET_TOKEN}\na events ${EVENTS_TOKEN}`, /line 2: name "a" is used twice/],
    [`bad/name events ${WALLET_TOKEN}`, /line 1: name must be/],
  ])('refuses %j, naming the line and never the token', (text, message) => {
    let err: unknown;
    try {
      parseTokenFile(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TokenFileError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(WALLET_TOKEN);
    expect((err as Error).message).not.toContain('secret-token');
  });
});

describe('scoped client tokens', () => {
  const relays: TestRelay[] = [];
  const clients: TestClient[] = [];
  const start = async (env: Record<string, string> = {}, logger?: ReturnType<typeof createRecordingLogger>['logger']) => {
    const r = await startRelay(env, logger);
    relays.push(r);
    return r;
  };
  const open = async (relay: TestRelay, options: object = {}) => {
    const c = await connect(relay.wsUrl, options);
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(relays.splice(0).map((r) => r.close()));
    removeTempDirs();
  });

  const paymentEvents = (): Envelope[] => [
    transactionEvent(),
    {
      type: 'PaymentSpent',
      id: `ps-${Math.random()}`,
      timestamp: Date.now(),
      data: { txid: 'a'.repeat(64), vout: 0, spent_txid: 'c'.repeat(64), block_height: null },
    },
    {
      type: 'PaymentReorged',
      id: `pr-${Math.random()}`,
      timestamp: Date.now(),
      data: { txid: 'a'.repeat(64), vout: 1, address: 'tsp1q', amount: 0.1, old_block_height: 9, old_block_hash: 'd'.repeat(64) },
    },
    {
      type: 'InvoicePaid',
      id: `ip-${Math.random()}`,
      timestamp: Date.now(),
      data: { label: 'order-1', address: 'tsp1q', amount: 0.1, received: 0.1, status: 'paid' },
    },
  ];
  const ids = (c: TestClient, events: Envelope[]) => c.received.filter((m) => events.some((e) => e.id === m.id)).map((m) => m.id);

  it('sends payment events only to tokens with the payments scope; BlockScanned to everyone', async () => {
    const relay = await start();
    const anonymous = await open(relay);
    const dashboard = await open(relay, bearer(EVENTS_TOKEN));
    const wallet = await open(relay, WALLET);
    const pub = await open(relay, bearer(PUBLISH_TOKEN));
    const payments = paymentEvents();
    const block = blockEvent();
    await publishAll(pub, [...payments, block]);
    for (const c of [anonymous, dashboard, wallet]) await c.next((m) => m.id === block.id);
    await wallet.next((m) => m.id === payments[3]!.id);
    // The block was published last: had the payment events gone to the others they would be there.
    expect(ids(anonymous, payments)).toEqual([]);
    expect(ids(dashboard, payments)).toEqual([]);
    expect(ids(wallet, payments)).toEqual(payments.map((e) => e.id));
  });

  it('answers FORBIDDEN to a subscribe naming payment events without the scope, and filters a replay by scope', async () => {
    const relay = await start();
    const pub = await open(relay, bearer(PUBLISH_TOKEN));
    const first = blockEvent();
    await publishAll(pub, [first]);
    const payments = paymentEvents();
    const block = blockEvent();
    await publishAll(pub, [...payments, block]);
    const dashboard = await open(relay, bearer(EVENTS_TOKEN));
    const refused = await dashboard.request('subscribe', { types: ['BlockScanned', 'InvoicePaid'] });
    expect(refused.data).toMatchObject({ code: 'FORBIDDEN', message: 'InvoicePaid need the payments scope' });
    await dashboard.request('subscribe', { since: first.id });
    await dashboard.next((m) => m.id === block.id);
    expect(ids(dashboard, payments)).toEqual([]);
    const wallet = await open(relay, WALLET);
    await wallet.request('subscribe', { since: first.id });
    await wallet.next((m) => m.id === block.id);
    expect(ids(wallet, payments)).toEqual(payments.map((e) => e.id));
  });

  it('makes payment events public with RELAY_PAYMENTS_PUBLIC=true', async () => {
    const relay = await start({ RELAY_PAYMENTS_PUBLIC: 'true' });
    const anonymous = await open(relay);
    const pub = await open(relay, bearer(PUBLISH_TOKEN));
    const payments = paymentEvents();
    await publishAll(pub, payments);
    await anonymous.next((m) => m.id === payments[3]!.id);
    expect(ids(anonymous, payments)).toEqual(payments.map((e) => e.id));
  });

  it('with RELAY_AUTH_TOKEN: refuses no token, admits file tokens with their scopes and the shared token with events', async () => {
    const shared = 'shared-auth-token-0123456789';
    const relay = await start({ RELAY_AUTH_TOKEN: shared });
    await expect(new TestClient(relay.wsUrl).opened()).rejects.toMatchObject({ status: 401 });
    const wallet = await open(relay, WALLET);
    const sharedClient = await open(relay, bearer(shared));
    const pub = await open(relay, bearer(PUBLISH_TOKEN));
    const [tx] = paymentEvents();
    const block = blockEvent();
    await publishAll(pub, [tx!, block]);
    await wallet.next((m) => m.id === tx!.id);
    await sharedClient.next((m) => m.id === block.id);
    expect(ids(sharedClient, [tx!])).toEqual([]);
  });

  it('re-reads the file when it changes: a new token works, a removed one is cut off, a broken file keeps the old tokens', async () => {
    const dir = tempDir();
    const file = writeTokenFile(dir);
    const { logger, lines } = createRecordingLogger();
    const relay = await start({ RELAY_TOKEN_FILE: file }, logger);
    const wallet = await open(relay, WALLET);
    const added = 'added-later-token-0123456789';
    await expect(new TestClient(relay.wsUrl, bearer(added)).opened()).rejects.toMatchObject({ status: 401 });

    appendFileSync(file, `pos-terminal events,payments ${added}\n`);
    await waitFor(() => lines.some((l) => l.includes('client tokens reloaded')), 5_000, 'reload');
    await open(relay, bearer(added));

    writeFileSync(file, `pos-terminal events,payments ${added}\n`);
    await wallet.closed;
    expect([wallet.closeCode, wallet.closeReason]).toEqual([1008, 'token revoked']);
    await expect(new TestClient(relay.wsUrl, WALLET).opened()).rejects.toMatchObject({ status: 401 });

    writeFileSync(file, 'this line is not a token line\n');
    await waitFor(() => lines.some((l) => l.includes('token file not reloaded')), 5_000, 'refused reload');
    await open(relay, bearer(added));

    // Logged by name, never by value.
    expect(lines.some((l) => l.includes('pos-terminal'))).toBe(true);
    for (const token of [WALLET_TOKEN, EVENTS_TOKEN, added]) expect(lines.join('\n')).not.toContain(token);
  });
});
