import { newRequestId, uuid } from '../src/request-id';
import { TRUST_NONE } from '../src/trust-proxy';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuid', () => {
  it('gives random version 4 UUIDs, each once, across many refills of its random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = uuid();
      expect(id).toMatch(V4);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
  });

  it('uses every hex digit in every free position (no byte left unset)', () => {
    const digits = Array.from({ length: 36 }, () => new Set<string>());
    for (let i = 0; i < 2_000; i++) [...uuid()].forEach((c, at) => digits[at]!.add(c));
    digits.forEach((set, at) => {
      if ([8, 13, 18, 23].includes(at)) expect([...set]).toEqual(['-']);
      else if (at === 14) expect([...set]).toEqual(['4']);
      else if (at === 19) expect([...set].sort()).toEqual(['8', '9', 'a', 'b']);
      else expect(set.size).toBe(16);
    });
  });

  it('is what a request gets when no trusted proxy named it', () => {
    const req = { headers: { 'x-request-id': 'from-anyone' }, socket: { remoteAddress: '203.0.113.7' } };
    const id = newRequestId(req as never, TRUST_NONE);
    expect(id).toMatch(V4);
    expect(newRequestId(req as never, TRUST_NONE)).not.toBe(id);
  });
});
