import { btcToSats, parseBtcAmount, satsToBtc } from '../src/amount';

describe('parseBtcAmount', () => {
  it.each([
    [0.00000001, 1n],
    [0.1, 10_000_000n],
    [1.23456789, 123_456_789n],
    [21_000_000, 2_100_000_000_000_000n],
  ])('accepts %p BTC as %p sats', (btc, sats) => {
    expect(parseBtcAmount(btc)).toBe(sats);
  });

  it.each([[0], [-1], [0.000000001], [1.234567891], ['1'], [null], [Number.NaN], [21_000_000.00000001]])('refuses %p', (value) => {
    expect(typeof parseBtcAmount(value)).toBe('string');
  });
});

describe('btcToSats', () => {
  it('rounds away the binary error of Core amounts', () => {
    expect(btcToSats(50.0000607)).toBe(5_000_006_070n);
    expect(btcToSats(3.9999869)).toBe(399_998_690n);
    expect(satsToBtc(399_998_690n)).toBe(3.9999869);
  });

  it('refuses a negative amount', () => {
    expect(() => btcToSats(-1)).toThrow(RangeError);
  });
});
