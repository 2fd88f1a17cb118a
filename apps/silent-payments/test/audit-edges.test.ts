import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getJson, offlineEnv, startService, type RunningService } from './support/service';
import { runCli } from '../src/cli';

// Edges found by an audit of the running service (docs/silent-payments.md): the documented bound of
// `offset`, methods the API does not serve, and the CLI's message for a file it cannot read.
describe('silent-payments edges', () => {
  let dir: string;
  let running: RunningService;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sp-edges-'));
    running = await startService(offlineEnv(dir));
  });
  afterAll(async () => {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([['/payments'], ['/labels']])('%s takes the documented largest offset, 1000000000, and refuses one past it', async (path) => {
    const largest = await getJson(running.url, `${path}?offset=1000000000`);
    expect(largest.status).toBe(200);
    expect(largest.body).toMatchObject({ total: 0, limit: 10, offset: 1_000_000_000 });
    const past = await getJson(running.url, `${path}?offset=1000000001`);
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ error: 'offset must be an integer from 0 to 1000000000', code: 'INVALID_REQUEST' });
  });

  it.each([['/payments'], ['/payments/abc:0'], ['/labels/order-1'], ['/generate-address'], ['/psbt'], ['/health']])(
    'answers OPTIONS %s with the 404 error record, like any method not served',
    async (path) => {
      const res = await fetch(`${running.url}${path}`, { method: 'OPTIONS' });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('allow')).toBeNull();
      expect(await res.json()).toEqual({ error: `no such endpoint: OPTIONS ${path}`, code: 'NOT_FOUND' });
    },
  );
});

describe('cli sign, a file it cannot read', () => {
  it('says the errno once, with the path', () => {
    let err = '';
    const missing = join(tmpdir(), 'sp-edges-no-such-file.psbt');
    const code = runCli(['sign', '--psbt', missing, '--spend-secret', missing], {
      stdout: () => undefined,
      stderr: (t) => (err += t),
      readStdin: () => Buffer.alloc(0),
      readFile: (path) => readFileSync(path),
    });
    expect(code).toBe(1);
    expect(err).toBe(`error: ENOENT: no such file or directory, open '${missing}'\n`);
  });
});
