import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainError, signSpend, startChainDouble, type ChainDouble } from '../src';
import { PASSWORD, USER, basic, rpc } from './support/helpers';

describe('chain state', () => {
  let node: ChainDouble;
  beforeAll(async () => {
    node = await startChainDouble({ user: USER, password: PASSWORD });
  });
  afterAll(() => node.close());

  it.each(['p2tr', 'p2wpkh', 'p2sh-p2wpkh', 'p2pkh'] as const)('funds a %s output that its key can spend', async (kind) => {
    const funded = node.fund(kind, 10_000_000n);
    const { body } = await rpc(node.url, 'getrawtransaction', [funded.txid, 1]);
    const out = (body.result as { vout: { scriptPubKey: { hex: string; address: string } }[] }).vout[funded.vout]!;
    expect(out.scriptPubKey.hex).toBe(Buffer.from(funded.script).toString('hex'));
    expect(out.scriptPubKey.address).toBe(funded.address);
    const spend = signSpend([funded], [{ script: funded.script, amount: 9_990_000n }]);
    const txid = node.sendRawTransaction(spend);
    const [hash] = node.mine(1);
    const block = (await rpc(node.url, 'getblock', [hash, 1])).body.result as { tx: string[] };
    expect(block.tx).toContain(txid);
  });

  it('gives p2tr outputs the tweaked key whose x-only key is in the script', () => {
    const funded = node.fund('p2tr');
    expect(Buffer.from(funded.publicKey.subarray(1)).toString('hex')).toBe(Buffer.from(funded.script.subarray(2)).toString('hex'));
  });

  it('refuses a double spend, a missing input and an overspend with Core codes', () => {
    const funded = node.fund('p2wpkh', 1_000_000n);
    node.sendRawTransaction(signSpend([funded], [{ script: funded.script, amount: 990_000n }]));
    const conflict = signSpend([funded], [{ script: funded.script, amount: 980_000n }]);
    expect(() => node.sendRawTransaction(conflict)).toThrow(expect.objectContaining({ code: -26, message: 'txn-mempool-conflict' }));
    node.mine(1);
    expect(() => node.sendRawTransaction(conflict)).toThrow(expect.objectContaining({ code: -25 }));
    expect(() => node.sendRawTransaction('00')).toThrow(ChainError);
  });

  it('mines given transactions, evicting mempool conflicts', () => {
    const funded = node.fund('p2wpkh', 1_000_000n);
    const first = node.sendRawTransaction(signSpend([funded], [{ script: funded.script, amount: 990_000n }]));
    const rival = signSpend([funded], [{ script: funded.script, amount: 985_000n }]);
    node.mine(1, [rival]);
    expect(node.chain.mempool.has(first)).toBe(false);
  });

  it('reorganizes: old blocks leave the active chain, their transactions return to the mempool', async () => {
    const funded = node.fund('p2wpkh', 1_000_000n);
    const txid = node.sendRawTransaction(signSpend([funded], [{ script: funded.script, amount: 990_000n }]));
    const [old] = node.mine(1);
    const height = node.tipHeight();
    const fresh = node.reorg(2);
    expect(fresh).toHaveLength(3);
    expect(node.tipHeight()).toBe(height + 1);
    expect(node.tipHash()).toBe(fresh[2]);
    const header = (await rpc(node.url, 'getblockheader', [old])).body.result as { confirmations: number };
    expect(header.confirmations).toBe(-1);
    expect(node.chain.mempool.has(txid)).toBe(true);
    const [next] = node.mine(1);
    expect(((await rpc(node.url, 'getblock', [next])).body.result as { tx: string[] }).tx).toContain(txid);
  });

  it('puts replacement transactions in the new branch and drops what they conflict with', () => {
    const funded = node.fund('p2wpkh', 1_000_000n);
    const original = node.sendRawTransaction(signSpend([funded], [{ script: funded.script, amount: 990_000n }]));
    node.mine(1);
    const replacement = signSpend([funded], [{ script: funded.script, amount: 900_000n }]);
    node.reorg(1, [replacement]);
    expect(node.chain.mempool.has(original)).toBe(false);
    expect(node.chain.txIndex.has(original)).toBe(false);
  });

  it('refuses to spend an immature coinbase', async () => {
    const block = (await rpc(node.url, 'getblock', [node.tipHash(), 2])).body.result as {
      tx: { txid: string; vout: { value: number }[] }[];
    };
    const cb = block.tx[0]!;
    const hex = signSpend(
      [{ ...node.fund('p2wpkh', 1_000n * 1_000n), txid: cb.txid, vout: 0 }],
      [{ script: new Uint8Array([0x51]), amount: 1n }],
    );
    expect(() => node.sendRawTransaction(hex)).toThrow(expect.objectContaining({ code: -26 }));
  });
});

describe('behaviours', () => {
  let node: ChainDouble;
  beforeEach(async () => {
    node = await startChainDouble({ user: USER, password: PASSWORD, initialBlocks: 1 });
  });
  afterEach(() => node.close());

  const post = () => fetch(node.url, { method: 'POST', headers: { authorization: basic() }, body: '{"id":1,"method":"getblockcount"}' });

  it('resets connections when down and answers again when normal', async () => {
    node.setBehaviour('down');
    await expect(post()).rejects.toThrow();
    node.setBehaviour('normal');
    expect((await post()).status).toBe(200);
  });

  it('never answers when hanging', async () => {
    node.setBehaviour('hang');
    const answered = await Promise.race([post().then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);
    expect(answered).toBe(false);
  });

  it('answers a non-JSON 200 when garbage', async () => {
    node.setBehaviour('garbage');
    const res = await post();
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
  });

  it("answers Core's 503 when busy", async () => {
    node.setBehaviour('busy');
    const res = await post();
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('Work queue depth exceeded');
  });
});

describe('cookie authentication', () => {
  it('writes a 0600 cookie file and accepts only the current cookie', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'double-'));
    const cookieFile = join(dir, '.cookie');
    const node = await startChainDouble({ cookieFile, initialBlocks: 1 });
    try {
      const cookie = readFileSync(cookieFile, 'utf8');
      expect(cookie).toMatch(/^__cookie__:[0-9a-f]{64}$/);
      expect(statSync(cookieFile).mode & 0o777).toBe(0o600);
      const call = (c: string) =>
        fetch(node.url, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(c).toString('base64')}` },
          body: '{"id":1,"method":"getblockcount"}',
        });
      expect((await call(cookie)).status).toBe(200);
      node.rotateCookie();
      expect((await call(cookie)).status).toBe(401);
      expect((await call(readFileSync(cookieFile, 'utf8'))).status).toBe(200);
    } finally {
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('initial block download', () => {
  it('answers initialblockdownload: true with the given headers and progress until unset', async () => {
    const double = await startChainDouble({ user: 'u', password: 'p', initialBlocks: 5 });
    try {
      const info = async () => {
        const res = await fetch(double.url, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
          body: '{"jsonrpc":"1.0","id":1,"method":"getblockchaininfo","params":[]}',
        });
        return ((await res.json()) as { result: Record<string, unknown> }).result;
      };
      expect(await info()).toMatchObject({ blocks: 5, headers: 5, initialblockdownload: false, verificationprogress: 1 });
      double.setInitialBlockDownload({ headers: 900, progress: 0.25 });
      expect(await info()).toMatchObject({ blocks: 5, headers: 900, initialblockdownload: true, verificationprogress: 0.25 });
      double.setInitialBlockDownload(undefined);
      expect(await info()).toMatchObject({ headers: 5, initialblockdownload: false });
    } finally {
      await double.close();
    }
  });
});
