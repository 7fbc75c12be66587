/**
 * Money is an exact integer count of pico-USD (1e-12 USD) held in a bigint. Every tariff of spec §8.1
 * (USD per 1M tokens with up to 6 decimals) is a whole number of pico-USD per token.
 */
export type Pico = bigint;

export const PICO_PER_USD = 1_000_000_000_000n;
const DECIMALS = 12;

/** "10.00" → 10_000_000_000_000n. Throws on anything but a non-negative decimal with ≤ 12 decimals. */
export function parseUsd(text: string): Pico {
  const m = /^(\d{1,15})(?:\.(\d{1,12}))?$/.exec(text.trim());
  if (!m) throw new RangeError(`not a USD amount: ${JSON.stringify(text)}`);
  const frac = (m[2] ?? "").padEnd(DECIMALS, "0");
  return BigInt(m[1]!) * PICO_PER_USD + BigInt(frac);
}

/** Exact decimal string, trailing zeros trimmed but at least cents: 1.5e12 → "1.50", 123n → "0.000000000123". */
export function formatUsd(value: Pico): string {
  const neg = value < 0n;
  const abs = neg ? -value : value;
  const whole = abs / PICO_PER_USD;
  let frac = (abs % PICO_PER_USD).toString().padStart(DECIMALS, "0").replace(/0+$/, "");
  if (frac.length < 2) frac = frac.padEnd(2, "0");
  return `${neg ? "-" : ""}${whole}.${frac}`;
}

/** Ceiling division for non-negative bigints (charges round up to the smallest unit, never down to zero). */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
