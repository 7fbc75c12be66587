/** What only the KV idempotency store promises: a finish that loses its claim leaves no chunks behind. */
import assert from "node:assert/strict";
import { KvStore } from "./kv_store.ts";

const LEASE = 30_000;
const TTL = 3_600_000;
const claim = (holder: string, now: number) => ({
  fingerprint: "f".repeat(64),
  holder,
  now,
  leaseMs: LEASE,
  ttlMs: TTL,
});
const head = (bytes: number) => ({ status: 200, headers: [] as [string, string][], stream: false, bytes });

async function bodyEntries(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: ["idempotency_body"] })) n++;
  return n;
}

Deno.test("KvIdempotency.finish: a claim taken over while the body's chunks are written leaves no chunks and the new claim as it was", async () => {
  const kv = await Deno.openKv(":memory:");
  const other = new KvStore(kv);
  const t = Date.now();
  let armed = false;
  let takeover: Promise<unknown> | undefined;
  // Once armed, the next atomic (the finish's chunks) commits, then another process takes the ended lease over.
  const spied = new Proxy(kv, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop !== "atomic") return typeof v === "function" ? v.bind(target) : v;
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = async () => {
          const out = await commit();
          if (armed) takeover ??= other.claimIdempotency("key_a", "idem_1", claim("h2", t + LEASE));
          if (armed) await takeover;
          return out;
        };
        return op;
      };
    },
  });
  const store = new KvStore(spied);
  try {
    assert.deepEqual(await store.claimIdempotency("key_a", "idem_1", claim("h1", t)), { claimed: true });
    armed = true;
    const body = new Uint8Array(150_000).fill(7); // 3 chunks
    assert.equal(
      await store.finishIdempotency("key_a", "idem_1", "h1", {
        head: head(150_000),
        body,
        expiresAt: t + TTL,
      }),
      false,
    );
    assert.deepEqual(await takeover, { claimed: true });
    assert.equal(await bodyEntries(kv), 0, "the chunks of the lost finish are deleted");
    assert.deepEqual(await other.getIdempotency("key_a", "idem_1", t + LEASE), {
      fingerprint: "f".repeat(64),
      state: "running",
      holder: "h2",
      leaseUntil: t + 2 * LEASE,
      expiresAt: t + LEASE + TTL,
    });
    assert.equal(await other.idempotentBody("key_a", "idem_1", t + LEASE), null);
  } finally {
    await store.close();
  }
});
