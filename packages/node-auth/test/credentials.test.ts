import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLogger } from '@repo/service';
import { createNodeCredentials } from '../src';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('createNodeCredentials', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'node-auth-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses user and password when both are given, never the cookie file', () => {
    const creds = createNodeCredentials({ user: 'u', password: 'p', cookieFile: join(dir, 'missing') });
    expect(creds.authorization()).toBe(basic('u:p'));
    expect(creds.refreshAfterRefusal()).toBe(false);
    expect(creds.cookieError()).toBeUndefined();
    expect(creds.refusal(401)).toEqual({ kind: 'auth', message: "node rejected the client's credentials (HTTP 401)" });
  });

  it('reads the cookie file, and re-reads it after a refusal when the node wrote a new one', () => {
    const file = join(dir, '.cookie');
    writeFileSync(file, '__cookie__:aaaa\n');
    let t = 0;
    const creds = createNodeCredentials({ cookieFile: file, now: () => t });
    expect(creds.authorization()).toBe(basic('__cookie__:aaaa'));
    writeFileSync(file, '__cookie__:bbbbbb\n');
    // Within the recheck interval the read cookie is trusted...
    expect(creds.authorization()).toBe(basic('__cookie__:aaaa'));
    // ...but a refusal re-reads at once, and says whether a retry is worth it.
    expect(creds.refreshAfterRefusal()).toBe(true);
    expect(creds.authorization()).toBe(basic('__cookie__:bbbbbb'));
    expect(creds.refreshAfterRefusal()).toBe(false);
    writeFileSync(file, '__cookie__:cccccccc\n');
    t += 1_000;
    expect(creds.authorization()).toBe(basic('__cookie__:cccccccc'));
  });

  it('names the errno of an unreadable cookie file, logs it once, and says when it is readable again', () => {
    const { logger, lines } = createMemoryLogger('info');
    const file = join(dir, 'cookie-dir');
    mkdirSync(file);
    let t = 0;
    const creds = createNodeCredentials({ cookieFile: file, logger, who: 'scanner', pathInRefusals: true, now: () => t });
    expect(creds.authorization()).toBeUndefined();
    expect(creds.cookieError()).toBe('EISDIR');
    t += 5_000;
    expect(creds.authorization()).toBeUndefined();
    expect(lines.filter((l) => l.code === 'EISDIR')).toHaveLength(1);
    expect(creds.refusal(401)).toEqual({
      kind: 'cookie',
      message: `scanner cannot read the node's cookie file ${file} (EISDIR): the node refused the call without it (HTTP 401)`,
    });
    rmSync(file, { recursive: true });
    writeFileSync(file, '__cookie__:dd\n');
    chmodSync(file, 0o600);
    t += 5_000;
    expect(creds.authorization()).toBe(basic('__cookie__:dd'));
    expect(lines.some((l) => l.msg === 'node cookie file readable again' && l.was === 'EISDIR')).toBe(true);
  });

  it('warns about a missing cookie file naming the setting', () => {
    const { logger, lines } = createMemoryLogger('info');
    const creds = createNodeCredentials({ cookieFile: join(dir, 'none'), logger, cookieSetting: 'CHAIN_RPC_COOKIE_FILE' });
    expect(creds.authorization()).toBeUndefined();
    expect(creds.cookieError()).toBe('ENOENT');
    expect(lines[0]).toMatchObject({
      code: 'ENOENT',
      msg: 'node cookie file missing (node not started yet, or CHAIN_RPC_COOKIE_FILE wrong)',
    });
  });
});
