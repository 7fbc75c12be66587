/**
 * The work of the theta queue bench (bench/theta_queue.ts), done alike in the bench process and in its peer
 * process (bench/theta_queue_peer.ts): a store opened from its description, a pool with the bench's settings,
 * the closed loops of the contention run and one waiter of the arrival-order run.
 */
import { AccountPool } from "../src/families/theta/account_pool.ts";
import type { PoolConfig } from "../src/families/theta/pool_state.ts";
import { KvStore } from "../src/store/kv_store.ts";
import { PgStore } from "../src/store/pg_store.ts";
import type { Store } from "../src/store/store.ts";

/** A store both processes can open: a KV path (":memory:" for this process alone) or a Postgres URL. */
export type StoreSpec = { kind: "kv"; path: string } | { kind: "pg"; url: string };

/** The store, counting its pool transactions (updateDocument calls: every waiter's read, every write). */
export async function openStore(s: StoreSpec): Promise<{ store: Store; transactions: () => number }> {
  const store = s.kind === "kv" ? await KvStore.open(s.path) : await PgStore.open(s.url);
  const update = store.updateDocument.bind(store);
  let n = 0;
  store.updateDocument = (name, change) => {
    n++;
    return update(name, change);
  };
  return { store, transactions: () => n };
}

/** How long a request holds its account: the same work for every worker and waiter. */
export const HOLD_MS = 1;

/** Unix ms with sub-ms precision, comparable between the bench process and its peer on one machine. */
export const clock = () => performance.timeOrigin + performance.now();

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The client's signal of every bench request: none leaves. */
export const STAYS = new AbortController().signal;

/**
 * The settings of a pool of `accounts` accounts as the gateway makes them (dispatch.ts), except
 * THETA_IDLE_RELEASE_MS = 0: an account is free for any key as soon as it is released, so every grant goes
 * through the shared queue (with the default 10 min, 30 keys on 3 accounts would be 3 keys served and 27
 * waiting for the idle release).
 */
export const poolConfig = (accounts: number): PoolConfig => ({
  accounts,
  idleMs: 0,
  ttlMs: 30_000,
  maxQueue: 200,
});

/** A pool with poolConfig(accounts) and THETA_QUEUE_TIMEOUT_MS's default, 30 s. */
export const newPool = (store: Store, holder: string, accounts: number) =>
  new AccountPool(store, holder, poolConfig(accounts), 30_000);

/** The loops of one process: each loop's waits, and the pool transactions of the process meanwhile. */
export interface Contended {
  workers: WorkerResult[];
  transactions: number;
}

/** One worker's grants within the window, and how long each waited (ms). */
export interface WorkerResult {
  key: string;
  waits: number[];
}

/**
 * One closed loop per key from `start` to `until` (Unix ms, clock()): acquire → hold HOLD_MS → release.
 * Grants that come after `until` are not counted (the loop then ends); nor are the transactions after it.
 */
export async function contend(
  pool: AccountPool,
  keys: string[],
  start: number,
  until: number,
  transactions: () => number,
): Promise<Contended> {
  await sleep(Math.max(0, start - clock()));
  const before = transactions();
  const [after, workers] = await Promise.all([
    sleep(until - clock()).then(transactions),
    Promise.all(keys.map(async (key) => {
      const waits: number[] = [];
      while (clock() < until) {
        const t0 = clock();
        const grant = await pool.acquire({
          id: crypto.randomUUID(),
          keyId: key,
          session: key,
          signal: STAYS,
        });
        const t1 = clock();
        if (t1 <= until) waits.push(t1 - t0);
        await sleep(HOLD_MS);
        grant.release();
      }
      return { key, waits };
    })),
  ]);
  return { workers, transactions: after - before };
}

/** When a waiter of the arrival-order run got its account and when it gave it back (Unix ms, clock()). */
export interface Held {
  grantedAt: number;
  releasedAt: number;
}

/** One waiter: acquire, hold HOLD_MS, release. */
export async function holdOnce(pool: AccountPool, id: string, key: string): Promise<Held> {
  const grant = await pool.acquire({ id, keyId: key, session: key, signal: STAYS });
  const grantedAt = clock();
  await sleep(HOLD_MS);
  const releasedAt = clock();
  grant.release();
  return { grantedAt, releasedAt };
}

/** The lines of a byte stream (the peer's protocol: one JSON message a line). */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buf = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      yield buf.slice(0, i);
      buf = buf.slice(i + 1);
    }
  }
}
