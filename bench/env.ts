/** The bench's settings from the environment (bench/main.ts header). */

/** A positive number from `name`, or `def` when unset. */
export const envNum = (name: string, def: number): number => {
  const v = Number(Deno.env.get(name) ?? def);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};

/** A number ≥ 0 from `name`, or `def` when unset (for settings where 0 turns a step off). */
export const envNonNegative = (name: string, def: number): number => {
  const v = Number(Deno.env.get(name) ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number ≥ 0`);
  return v;
};
