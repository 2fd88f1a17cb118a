/** Satoshis per bitcoin. */
export const SATS_PER_BTC = 100_000_000;
/** 21 million BTC: no amount can exceed it (consensus MAX_MONEY). */
export const MAX_MONEY_SATS = 21_000_000n * 100_000_000n;

/**
 * Converts a BTC amount as Bitcoin Core prints it (a JSON number with at most 8 decimals) to
 * satoshis. Rounding to the nearest integer undoes the binary floating point error of the
 * decimal; throws a RangeError for a negative, non-finite or out-of-range value.
 */
export function btcToSats(value: number): bigint {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError('"value" expected a non-negative finite BTC amount');
  }
  const sats = BigInt(Math.round(value * SATS_PER_BTC));
  if (sats > MAX_MONEY_SATS) throw new RangeError('"value" expected at most 21,000,000 BTC');
  return sats;
}

/** Converts satoshis to a BTC number for JSON answers (exact to 8 decimals below 2^53 sats). */
export function satsToBtc(sats: bigint): number {
  return Number(sats) / SATS_PER_BTC;
}

/**
 * Parses an amount sent by a client: a positive JSON number of BTC with at most 8 decimals and
 * at most 21,000,000. Returns the satoshis, or a string saying what is wrong.
 */
export function parseBtcAmount(value: unknown): bigint | string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'amount must be a number (BTC)';
  if (value <= 0) return 'amount must be positive';
  if (value > 21_000_000) return 'amount must be at most 21000000 BTC';
  const sats = Math.round(value * SATS_PER_BTC);
  // An integer number of satoshis divided by 1e8 gives back the nearest double to the decimal,
  // so this holds exactly when the client's decimal had at most 8 places.
  if (sats / SATS_PER_BTC !== value || sats === 0) return 'amount must have at most 8 decimals (1 satoshi = 0.00000001 BTC)';
  return BigInt(sats);
}
