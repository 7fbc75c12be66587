/**
 * Reserve → settle cycles per second, in-process, against a real KvStore (":memory:" or a temp file).
 * The loop yields to the event loop every CHUNK cycles so group commits run while it goes; the final
 * `accounts.close()` (flushing everything still pending) is inside the timed window.
 */
import { Accounts } from "../src/accounts/accounts.ts";
import { reserve } from "../src/billing/ledger.ts";
import { COMMON_CAP_CODES } from "../src/families/policy.ts";
import { Tariff } from "../src/billing/tariff.ts";
import { TARIFF_SEED } from "../src/catalog/tariff_seed.ts";
import { findModel } from "../src/catalog/models.ts";
import { parseUsd } from "../src/money/usd.ts";
import { KvStore } from "../src/store/kv_store.ts";
import { Logger } from "../src/util/log.ts";

export interface LedgerResult {
  store: string;
  cycles: number;
  /** Time of the loop alone, ms. */
  loopMs: number;
  /** Time of the final accounts.close() (last group commit), ms. */
  closeMs: number;
  cyclesPerSec: number;
  /** Usage rows found in the store afterwards (counted up to `cycles`). */
  rowsStored: number;
}

const CHUNK = 1_000;

async function countRows(store: KvStore, keyId: string): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.listUsage(keyId, after ? { limit: 1000, after } : { limit: 1000 });
    n += page.rows.length;
    if (!page.next) return n;
    after = page.next;
  }
}

/**
 * Settlement → durable lag of the group commit at a steady rate on a KV file (the durability window,
 * SETTLE_DURABILITY_MS): `perSecond` reserve+settle cycles spread over 10 ms ticks for `seconds`, then the committer's
 * measured lag (oldest pending settlement → its commit returned).
 */
export async function benchCommitLag(perSecond: number, seconds: number) {
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-kv-" });
  const store = await KvStore.open(`${dir}/bench.kv`);
  try {
    const accounts = await Accounts.load(store, new Logger("error", () => {}));
    const cycle = await cycler(accounts);
    const perTick = Math.max(1, Math.round(perSecond / 100));
    const end = performance.now() + seconds * 1000;
    let cycles = 0;
    while (performance.now() < end) {
      for (let i = 0; i < perTick; i++) await cycle(cycles++);
      await new Promise((r) => setTimeout(r, 10));
    }
    await accounts.close();
    return { cycles, ...accounts.committer.stats() };
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** One reserve → settle cycle on a fresh well-funded key, as a function of the cycle number. */
async function cycler(accounts: Accounts) {
  const { account } = await accounts.create({ balance: parseUsd("1000000000.00"), name: "bench" });
  const tariff = new Tariff(TARIFF_SEED);
  const model = findModel("k3")!;
  const now = () => Date.now();
  const log = new Logger("error", () => {});
  const usage = {
    inputTokens: 20,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 12,
    reasoningTokens: 0,
    webSearchRequests: 0,
  };
  const run = async (n: number) => {
    const r = await reserve(
      accounts.ledger,
      tariff,
      {
        account,
        capCodes: COMMON_CAP_CODES,
        model,
        inputTokens: 20,
        outputBudget: 1024,
        requestId: `req_bench_${n}`,
        endpoint: "chat.completions",
        stream: false,
      },
      now,
      log,
    );
    r.settle({ usage, usageSource: "upstream", status: "ok" });
  };
  return Object.assign(run, { account });
}

export async function benchLedger(kind: "memory" | "file", seconds: number): Promise<LedgerResult> {
  const dir = kind === "file" ? await Deno.makeTempDir({ prefix: "gw-bench-kv-" }) : undefined;
  const store = await KvStore.open(dir ? `${dir}/bench.kv` : ":memory:");
  try {
    const accounts = await Accounts.load(store, new Logger("error", () => {}));
    const cycle = await cycler(accounts);
    const account = cycle.account;
    let cycles = 0;
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    while (performance.now() < end) {
      for (let i = 0; i < CHUNK; i++) await cycle(cycles++);
      await new Promise((r) => setTimeout(r, 0));
    }
    const t1 = performance.now();
    await accounts.close();
    const t2 = performance.now();
    if (account.held !== 0n) throw new Error(`holds left open: ${account.held}`);
    const rowsStored = await countRows(store, account.rec.id);
    return {
      store: kind === "memory" ? "KV :memory:" : "KV temp file",
      cycles,
      loopMs: t1 - t0,
      closeMs: t2 - t1,
      cyclesPerSec: cycles / ((t2 - t0) / 1000),
      rowsStored,
    };
  } finally {
    store.close();
    if (dir) await Deno.remove(dir, { recursive: true });
  }
}
