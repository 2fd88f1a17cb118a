import { coreAcceptsStrings } from '../src';

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => Buffer.from(p as string)));

// Bitcoin Core 29.2's reader (univalue's JSONUTF8StringFilter); the rpc-proxy's real-node suite
// checks the same bodies against the node.
describe('coreAcceptsStrings', () => {
  it.each([
    ['an invalid byte', bytes('{"method":"getblockcount', [0xff], '"}')],
    ['a byte 0x80-0xBF out of a sequence', bytes('{"a":"', [0x80], '"}')],
    ['a lead byte 0xF8 or above', bytes('{"a":"', [0xf8, 0x80], '"}')],
    ['a sequence cut short', bytes('{"', [0xe2, 0x82], '":1}')],
    ['a surrogate written in UTF-8', bytes('{"a":"x', [0xed, 0xa0, 0x80], '"}')],
    ['an escaped lone high surrogate', '{"method":"stop\\ud800"}'],
    ['an escaped lone low surrogate', '{"a":"x\\udc00"}'],
    ['two high surrogates', '{"a":"\\ud800\\ud800\\udc00"}'],
  ])('refuses %s', (_name, body) => {
    expect(coreAcceptsStrings(Buffer.from(body))).toBe(false);
  });

  it.each([
    ['ASCII', '{"method":"getblockcount","params":[]}'],
    ['an escaped pair', '{"a":"\\ud83d\\ude00"}'],
    ['multi-byte UTF-8', bytes('{"a":"', [0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80], '"}')],
    ['a pair split by ASCII (Core pairs them across it)', '{"a":"\\ud800a\\udc00"}'],
    ['an overlong form (Core does not check)', bytes('{"a":"', [0xc0, 0x80], '"}')],
    ['a pair in CESU-8', bytes('{"a":"', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], '"}')],
    ['bytes outside strings', bytes('{"a":1}', [0xff])],
  ])('accepts %s', (_name, body) => {
    expect(coreAcceptsStrings(Buffer.from(body))).toBe(true);
  });
});
