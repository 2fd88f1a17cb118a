import { listBitcoindFixtures, loadBitcoindFixture } from '@repo/chain-double';
import { initialState, parseCall, splitSuccessReply, successReply } from '@repo/json-rpc';
import { canonicalJson, echoableId, scanCoalescable } from '../src/coalesce';
import { basic, NODE_PASSWORD, NODE_USER, post, startGate, startHarness, until, type Gate, type Harness } from './support/helpers';
import { createSilentLogger } from '@repo/service';

// Every recorded single call of Core 29.2 answered 200: the result is cut out of the reply
// exactly when it is a success, and wrapping it again gives the recorded bytes.
const SINGLE_200 = listBitcoindFixtures()
  .map(loadBitcoindFixture)
  .filter((f) => f.status === 200 && f.request.body_raw?.trim().startsWith('{') && f.body_raw !== '');

describe('splitSuccessReply and successReply on the recordings', () => {
  it('has recordings to check', () => {
    expect(SINGLE_200.length).toBeGreaterThan(10);
  });

  it.each(SINGLE_200.map((f) => [f.name, f] as const))('cuts the result out of %s and wraps it back byte for byte', (_name, f) => {
    const state = initialState();
    parseCall(JSON.parse(f.request.body_raw as string), state);
    const body = Buffer.from(f.body_raw, 'utf8');
    const result = splitSuccessReply(body, state);
    const success = (f.body as { error?: unknown }).error === undefined || (f.body as { error?: unknown }).error === null;
    if (!success) {
      expect(result).toBeUndefined();
      return;
    }
    expect(JSON.parse((result as Buffer).toString())).toEqual((f.body as { result: unknown }).result);
    expect(successReply(result as Buffer, state).equals(body)).toBe(true);
  });
});

describe('scanCoalescable', () => {
  it.each([
    ['{"jsonrpc":"1.0","id":"b","method":"getblock","params":["00ff",1]}', true],
    ['{"id":-12,"method":"getblockhash","params":[0]}', true],
    ['{ "method" : "getblockcount" , "params" : { "a" : [ 1 , { "b" : true } ] } }', true],
    ['{"method":"getblock","params":["00ff",1.0]}', false],
    ['{"method":"getblock","params":["00ff",1e0]}', false],
    ['{"method":"getblockhash","params":[-0]}', false],
    ['{"method":"getblockhash","params":[9007199254740993]}', false],
    ['{"method":"getblockcount","method":"getblockhash","params":[1]}', false],
    ['{"method":"getblock","params":{"blockhash":"00","blockhash":"ff"}}', false],
    ['{"method":"getblock","params":["caf\u00e9"]}', false],
    ['{"method":"getblock","params":["a\u007fb"]}', false],
    ['{"method":"getblock","params":["a:b","c"]}', true],
  ])('tells whether %s reads the same to Core and to JSON.parse: %s', (text, expected) => {
    expect(scanCoalescable(Buffer.from(text, 'utf8'), JSON.parse(text))).toBe(expected);
  });
});

describe('canonicalJson and echoableId', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }, 'x'] })).toBe('{"a":[{"c":null,"d":2},"x"],"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it.each([
    [undefined, true],
    [null, true],
    [true, true],
    [42, true],
    ['abc 1', true],
    [1.5, false],
    ['tab\there', false],
    ['caf\u00e9', false],
    [{ a: 1 }, false],
    [[1], false],
  ])('echoes id %j exactly: %s', (id, expected) => {
    expect(echoableId({ id: id === undefined ? undefined : { value: id }, version: '1.0' })).toBe(expected);
  });
});

describe('coalescing identical calls in flight', () => {
  let h: Harness;
  let gate: Gate;

  async function start(env: Record<string, string> = {}): Promise<void> {
    gate = await startGate();
    // The gate holds the node until every distinct call reached it: none may wait behind another's batch.
    h = await startHarness({ BITCOIND_RPC_URL: gate.url, NODE_MAX_CONCURRENCY: '64', ...env }, {}, createSilentLogger(), {
      batchesInFlight: 0,
      overlapCalls: 0,
      overlapBatches: 1,
    });
    gate.target = h.node.url;
  }
  beforeEach(() => start());
  afterEach(async () => {
    await h.close();
    await gate.close();
  });

  /** Sends every body at once through the proxy, holding the node until `expectedAtNode` calls reached it and the rest wait in flights. */
  async function sendHeld(bodies: unknown[], expectedAtNode: number, path = '/') {
    const pending = bodies.map((b) => post(h.url, b, { path }));
    await until(() => gate.held + h.app.coalescer.stats.waiting === bodies.length);
    const atNode = gate.held;
    gate.release(true);
    const answers = await Promise.all(pending);
    expect(atNode).toBe(expectedAtNode);
    return answers;
  }

  /** The double's own answer to `body` (status and bytes). */
  async function direct(body: unknown, path = '/') {
    const res = await post(h.node.url, body, { path, auth: basic(NODE_USER, NODE_PASSWORD) });
    return { status: res.status, text: res.text };
  }

  it('sends N identical reads to the node once and answers each with its own id, byte for byte as the node would', async () => {
    const ids = ['a', 'b', 7, null, true, 'a', -3, 'id with spaces'];
    const bodies = ids.map((id) => ({ jsonrpc: '1.0', id, method: 'getblockchaininfo', params: [] }));
    const answers = await sendHeld(bodies, 1);
    expect(gate.received).toBe(1);
    for (const [i, body] of bodies.entries()) {
      expect({ status: answers[i]?.status, text: answers[i]?.text }).toEqual(await direct(body));
      expect(answers[i]?.json().id).toEqual(ids[i]);
    }
    expect(h.app.coalescer.stats).toMatchObject({ flights: 1, followers: 7, shared: 7, waiting: 0 });
  });

  it('merges 1.0, 2.0 and no-version calls by version and answers each in its own envelope', async () => {
    const hash = h.node.tipHash();
    const bodies = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => {
      const call = { id: `c${i}`, method: 'getblock', params: [hash, 1] };
      if (i % 3 === 0) return { jsonrpc: '1.0', ...call };
      if (i % 3 === 1) return { jsonrpc: '2.0', ...call };
      return call;
    });
    const answers = await sendHeld(bodies, 3);
    for (const [i, body] of bodies.entries()) expect({ status: answers[i]?.status, text: answers[i]?.text }).toEqual(await direct(body));
    expect(answers.map((a) => 'jsonrpc' in a.json())).toEqual([false, true, false, false, true, false, false, true, false]);
    expect(h.app.coalescer.stats.shared).toBe(6);
  });

  it('merges named parameters given in another order, and keeps different parameters apart', async () => {
    const hash = h.node.tipHash();
    const bodies = [
      { id: 1, method: 'getblockhash', params: [1] },
      { id: 2, method: 'getblockhash', params: [2] },
      { id: 3, method: 'getblockhash', params: [1] },
      { id: 4, method: 'getblockhash', params: [2] },
      { id: 5, method: 'getblockheader', params: { blockhash: hash, verbose: true } },
      { id: 6, method: 'getblockheader', params: { verbose: true, blockhash: hash } },
      { id: 7, method: 'getblockheader', params: { blockhash: hash, verbose: false } },
    ];
    const answers = await sendHeld(bodies, 4);
    for (const [i, body] of bodies.entries()) expect({ status: answers[i]?.status, text: answers[i]?.text }).toEqual(await direct(body));
  });

  it.each([
    ['a write (sendrawtransaction)', { method: 'sendrawtransaction', params: ['00'] }, '/'],
    ['a wallet path', { method: 'getblockcount', params: [] }, '/wallet/testwallet'],
    ['a parameter Core reads otherwise (1.0 for 1)', '{"id":1,"method":"getblockhash","params":[1.0]}', '/'],
    ['a fractional id', '{"id":1.5,"method":"getblockcount","params":[]}', '/'],
    ['a batch', '[{"jsonrpc":"1.0","id":1,"method":"getblockcount","params":[]}]', '/'],
    ['a key written twice', '{"id":1,"method":"getblockcount","method":"getblockcount","params":[]}', '/'],
  ] as const)('never merges %s', async (_name, body, path) => {
    const bodies = [body, body, body];
    const answers = await sendHeld(bodies, 3, path);
    expect(gate.received).toBe(3);
    for (const [i, b] of bodies.entries()) expect({ status: answers[i]?.status, text: answers[i]?.text }).toEqual(await direct(b, path));
    expect(h.app.coalescer.stats.followers).toBe(0);
  });

  it('never merges notifications', async () => {
    const note = { jsonrpc: '2.0', method: 'getblockcount', params: [] };
    const answers = await sendHeld([note, note, { ...note, id: 1 }], 3);
    expect(answers.map((a) => a.status)).toEqual([204, 204, 200]);
  });

  it('does not share an error reply: each waiter sends its own call and gets its own error', async () => {
    const missing = 'ab'.repeat(32);
    const bodies = ['x', 'y', 'z', 4].map((id) => ({ jsonrpc: '1.0', id, method: 'getblock', params: [missing, 1] }));
    const answers = await sendHeld(bodies, 1);
    expect(gate.received).toBe(4);
    for (const [i, body] of bodies.entries()) {
      expect({ status: answers[i]?.status, text: answers[i]?.text }).toEqual(await direct(body));
      expect(answers[i]?.json().error.code).toBe(-5);
    }
    expect(h.app.coalescer.stats).toMatchObject({ followers: 3, shared: 0, fallbacks: 3 });
  });

  it('answers every waiter -32603 in its own envelope when the node goes away mid-flight', async () => {
    const bodies = [
      { jsonrpc: '1.0', id: 1, method: 'getblockcount', params: [] },
      { jsonrpc: '1.0', id: 2, method: 'getblockcount', params: [] },
      { jsonrpc: '1.0', id: 3, method: 'getblockcount', params: [] },
    ];
    const pending = bodies.map((b) => post(h.url, b));
    await until(() => gate.held === 1 && h.app.coalescer.stats.waiting === 2);
    gate.goDown();
    const answers = await Promise.all(pending);
    for (const [i, a] of answers.entries()) {
      expect(a.status).toBe(500);
      expect(a.json()).toEqual({ result: null, error: { code: -32603, message: expect.stringContaining('node unreachable') }, id: i + 1 });
    }
    expect(h.app.coalescer.stats.sharedErrors).toBe(2);
  });

  it('keeps nothing after the reply: the next identical call goes to the node again', async () => {
    const body = { id: 1, method: 'getblockcount', params: [] };
    await sendHeld([body, body], 1);
    // The flight's entry is gone with the reply (src/string-table.ts empties its slot).
    expect(h.app.coalescer.inFlight).toBe(0);
    h.node.mine(1);
    const again = await post(h.url, body);
    expect(again.json().result).toBe(h.node.tipHeight());
    expect(gate.received).toBe(2);
  });

  it('sends every call to the node with RPC_COALESCE=false', async () => {
    await h.close();
    await gate.close();
    await start({ RPC_COALESCE: 'false' });
    const body = { jsonrpc: '1.0', id: 'same', method: 'getblockchaininfo', params: [] };
    const pending = [1, 2, 3, 4].map(() => post(h.url, body));
    await until(() => gate.held === 4);
    gate.release(true);
    const answers = await Promise.all(pending);
    const expected = await direct(body);
    for (const a of answers) expect({ status: a.status, text: a.text }).toEqual(expected);
    expect(h.app.coalescer.stats.flights).toBe(0);
  });
});
