/** Every Deno KV key shape the store uses, in one place. */

export const kvKeys = {
  key: (id: string) => ["key", id] as const,
  keyPrefix: () => ["key"] as const,
  keyByHash: (hash: string) => ["key_by_hash", hash] as const,
  /** Usage rows sort newest first: inverted time, then request id. */
  usage: (keyId: string, createdAt: number, requestId: string) =>
    ["usage", keyId, Number.MAX_SAFE_INTEGER - createdAt, requestId] as const,
  usagePrefix: (keyId: string) => ["usage", keyId] as const,
  /** The live tariff: every rate row in one value (a few dozen rows, far below the 64 KiB limit). */
  tariff: () => ["tariff"] as const,
};
