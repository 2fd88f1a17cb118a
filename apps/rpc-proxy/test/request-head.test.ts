import { maxHeaderSize } from 'node:http';
import { loadHttpParser } from '../src/llhttp';
import { createLlhttpHeadReader, readPlainHead } from '../src/request-head';

// The front end's two readers of request heads (src/request-head.ts): whatever head the plain
// reader accepts, the llhttp reader (strict, as the front end and node:http run it) must read as
// the same request (method, target, headers, keep-alive), whole, its body exactly the length the
// plain reader found. Heads the clients send, then every one-byte change of them (replaced,
// inserted, removed) and random ones.

const readWithLlhttp = createLlhttpHeadReader(loadHttpParser()!);

const END = Buffer.from('\r\n\r\n');

/** The plain reading of a head (up to its first blank line), checked against llhttp's; 'refused' or 'accepted'. */
function compare(head: Buffer): 'refused' | 'accepted' | 'no head' {
  const headEnd = head.indexOf(END);
  if (headEnd < 0) return 'no head';
  const plain = readPlainHead(head, headEnd);
  if (plain === undefined) return 'refused';
  const { bodyLength, ...read } = plain;
  const request = Buffer.concat([head.subarray(0, headEnd + 4), Buffer.alloc(bodyLength, 0x7b)]);
  expect([head.toString('latin1'), readWithLlhttp(request, maxHeaderSize)]).toEqual([head.toString('latin1'), read]);
  return 'accepted';
}

const AUTH = 'Basic Y2xpZW50OmNsaWVudHBhc3M=';
/** Heads clients send, and some a byte away from what llhttp reads otherwise (a near-miss name or value). */
const HEADS = [
  `POST / HTTP/1.1\r\nHost: 127.0.0.1:18443\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n`,
  `POST /wallet/w1 HTTP/1.1\r\nhost: localhost\r\nauthorization: ${AUTH}\r\ncontent-length: 7\r\nconnection: keep-alive\r\n\r\n`,
  `POST / HTTP/1.1\r\nHost: x\r\nUser-Agent: python-requests/2.31\r\nAccept-Encoding: gzip, deflate\r\nAccept: */*\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
  `POST / HTTP/1.1\r\nHost: x\r\nXroxy-Connection: close\r\nXransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n`,
  `POST / HTTP/1.1\r\nHost: x\r\nXpgrade: h2c\r\nXxpect: 100-continue\r\nXontent-Length: 3\r\nContent-Length: 3\r\n\r\n`,
  `POST / HTTP/1.1\r\nHost: x\r\nXonnection: close\r\nX-Request-Id: a\tb c\r\nX-Forwarded-For: 10.0.0.1, 10.0.0.2\r\n\r\n`,
];
/** Bytes each position is changed to: blanks, line ends, separators, controls, high bytes, and the letters that make a near-miss name real. */
const BYTES = [
  ...[0x00, 0x09, 0x0a, 0x0b, 0x0d, 0x20, 0x22, 0x23, 0x25, 0x28, 0x2c, 0x2f, 0x3a, 0x3b, 0x3f, 0x40, 0x5c, 0x7f, 0x80, 0xff],
  ...Buffer.from('aACcEePpTtUu09-k'),
];

describe('rpc-proxy request heads: the plain reader against llhttp', () => {
  it('reads the heads clients send as llhttp reads them', () => {
    for (const head of HEADS) compare(Buffer.from(head, 'latin1'));
    expect(HEADS.slice(0, 3).map((h) => compare(Buffer.from(h, 'latin1')))).toEqual(['accepted', 'accepted', 'accepted']);
    expect(readPlainHead(Buffer.from(HEADS[2] as string), HEADS[2]!.indexOf('\r\n\r\n'))?.keepAlive).toBe(false);
  });

  it('refuses what llhttp reads otherwise or node:http answers itself, and each is left to llhttp', () => {
    const base = (extra: string, line = 'POST / HTTP/1.1') => `${line}\r\nHost: x\r\n${extra}Content-Length: 0\r\n\r\n`;
    const refused = [
      base('Proxy-Connection: close\r\n'),
      base('Transfer-Encoding: chunked\r\n'),
      base('Expect: 100-continue\r\n'),
      base('Upgrade: h2c\r\nConnection: upgrade\r\n'),
      base('Connection: keep-alive, close\r\n'),
      base('host: y\r\n'),
      base('Content-Length: 0\r\n'),
      base('X-A:  \r\n'),
      base('X-A: b \r\n'),
      base('X-A: b\r\n c\r\n'),
      base('X-A : b\r\n'),
      base('X_A: b\r\n'),
      base('X-A: caf\u00e9\r\n'),
      base(Array.from({ length: 30 }, (_, i) => `X-${i}: v\r\n`).join('')),
      base('', 'POST / HTTP/1.0'),
      base('', 'post / HTTP/1.1'),
      base('', 'GET / HTTP/1.1'),
      base('', 'POST /?a=1 HTTP/1.1'),
      base('', 'POST http://x/ HTTP/1.1'),
      base('', 'POST  / HTTP/1.1'),
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n`,
      `POST / HTTP/1.1\nHost: x\r\n\r\n`,
    ];
    for (const head of refused) expect([head, compare(Buffer.from(head, 'latin1'))]).toEqual([head, 'refused']);
    // 32 headers are refused (above: llhttp hands them over in pieces), 31 read.
    expect(compare(Buffer.from(base(Array.from({ length: 29 }, (_, i) => `X-${i}: v\r\n`).join('')), 'latin1'))).toBe('accepted');
  });

  it('reads no head one byte away from the usual ones otherwise than llhttp (replaced, inserted, removed)', () => {
    const counts = { accepted: 0, refused: 0, 'no head': 0 };
    for (const text of HEADS) {
      const head = Buffer.from(text, 'latin1');
      for (let at = 0; at < head.length - 4; at++) {
        for (const b of BYTES) {
          const replaced = Buffer.from(head);
          replaced[at] = b;
          counts[compare(replaced)]++;
          counts[compare(Buffer.concat([head.subarray(0, at), Buffer.of(b), head.subarray(at)]))]++;
        }
        counts[compare(Buffer.concat([head.subarray(0, at), head.subarray(at + 1)]))]++;
      }
    }
    // Both kinds are many: the changes reach what is read and what is refused.
    expect(counts.accepted).toBeGreaterThan(3_000);
    expect(counts.refused).toBeGreaterThan(10_000);
  });

  it('reads no head changed at random in several places otherwise than llhttp', () => {
    let seed = 0x2545f491;
    const random = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let accepted = 0;
    for (let round = 0; round < 20_000; round++) {
      const head = Buffer.from(HEADS[random(HEADS.length)] as string, 'latin1');
      const changed = Buffer.from(head);
      for (let n = 1 + random(3); n > 0; n--) changed[random(head.length - 4)] = BYTES[random(BYTES.length)] as number;
      if (compare(changed) === 'accepted') accepted++;
    }
    expect(accepted).toBeGreaterThan(1_000);
  });
});
