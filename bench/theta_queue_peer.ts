/**
 * The second process of the theta queue bench (bench/theta_queue.ts): its own store handle on the same KV
 * file or Postgres schema and its own pools (holder ids), driven over stdin/stdout, one JSON message a line:
 *
 *   → {"op":"contend","accounts":3,"keys":[…],"start":ms,"until":ms}  ← {"op":"contend","contended":{…}}
 *   → {"op":"hold","accounts":1,"id":"…","key":"…"}                    ← {"op":"hold","id":"…","held":{…}}
 *
 * It says {"op":"ready"} once its store is open, and closes it and exits when its stdin ends. A real process,
 * not a second handle in the bench's own: `kv.watch` hears every handle of a KV file in one process (workers
 * included), so only another process shows how KV waiters hear each other (kv_documents.ts KV_WATCH_POLL_MS).
 *
 *   deno run -A --unstable-kv bench/theta_queue_peer.ts '{"kind":"kv","path":"/tmp/…/theta.kv"}'
 */
import type { AccountPool } from "../src/families/theta/account_pool.ts";
import { contend, holdOnce, lines, newPool, openStore, type StoreSpec } from "./theta_queue_work.ts";

const { store, transactions } = await openStore(JSON.parse(Deno.args[0]!) as StoreSpec);
const pools = new Map<number, AccountPool>();
const poolOf = (accounts: number) => {
  let pool = pools.get(accounts);
  if (!pool) pools.set(accounts, pool = newPool(store, `peer_${accounts}_${crypto.randomUUID()}`, accounts));
  return pool;
};
const out = Deno.stdout.writable.getWriter();
const encoder = new TextEncoder();
const send = (m: unknown) => out.write(encoder.encode(JSON.stringify(m) + "\n"));

await send({ op: "ready" });
const running: Promise<unknown>[] = [];
for await (const line of lines(Deno.stdin.readable)) {
  const m = JSON.parse(line);
  if (m.op === "contend") {
    running.push(
      contend(poolOf(m.accounts), m.keys, m.start, m.until, transactions)
        .then((contended) => send({ op: "contend", contended })),
    );
  } else if (m.op === "hold") {
    running.push(
      holdOnce(poolOf(m.accounts), m.id, m.key).then((held) => send({ op: "hold", id: m.id, held })),
    );
  } else {
    throw new Error(`theta queue peer: unknown message ${line}`);
  }
}
await Promise.all(running);
await out.close();
await store.close();
