/**
 * What a group commit costs per usage row as a function of the rows one round carries: the store's `commit`
 * (src/store/kv_commit.ts) on a KV file, rounds of a k3 JSON request's row and its key's money delta, one
 * after the other. Per round size: the CPU per row of the main thread, of KV's SQLite writer (`sw-*`) and of
 * every thread, and the wall time per row. A round has a cost of its own (its transaction, its batch marker,
 * the hourly sums) beside each row's, so the rows a round carries set the CPU per request under load
 * (src/accounts/group_commit.ts ROUND_GAP_MS; docs/performance.md "The group commit's rounds").
 *
 *   deno run -A --unstable-kv bench/commit_cost.ts [SIZES] [ROWS]
 *
 * SIZES: rows per round, comma-separated (default 8,30,60,150,300); ROWS: rows measured per size (default
 * 40,000), after 100 rounds of warm-up. COMMIT_COST_KEYS spreads the rows over that many keys (default 1, as
 * the side by side's load).
 */
import type { UsageRow } from "../src/store/types.ts";
import { KvStore } from "../src/store/kv_store.ts";
import { threadJiffies } from "./cpu.ts";
import { envNum } from "./env.ts";

export interface CommitCost {
  rowsPerRound: number;
  rows: number;
  /** CPU per row, µs: the main thread, KV's SQLite writer, every thread. */
  mainUs: number;
  writerUs: number;
  allUs: number;
  wallUs: number;
}

const JIFFY_US = 10_000;

/** A k3 JSON request's usage row (src/billing/ledger.ts builds the same fields). */
function usageRow(n: number, keyId: string, at: number): UsageRow {
  return {
    requestId: `req_bench${String(n).padStart(10, "0")}`,
    keyId,
    family: "alpha",
    model: "k3",
    endpoint: "/v1/chat/completions",
    stream: false,
    status: "ok",
    createdAt: at,
    inputTokens: 21,
    cachedInputTokens: 0,
    outputTokens: 9,
    webSearchRequests: 0,
    searchFee: 0n,
    reserved: 480_045_000_000n,
    charged: 35_100_000n,
    writtenOff: 0n,
    usageSource: "upstream",
    rates: { input: 600_000n, cacheRead: 150_000n, output: 2_500_000n, search: 10_000_000_000n },
  };
}

export interface CommitCostBench {
  measure(rowsPerRound: number, rows: number): Promise<CommitCost>;
  /** Usage rows committed so far, read back from the store. */
  stored(): Promise<number>;
  close(): Promise<void>;
}

export async function commitCostBench(dir: string, keys = 1): Promise<CommitCostBench> {
  const store = await KvStore.open(`${dir}/commit-cost.kv`);
  const keyIds = Array.from({ length: keys }, (_, i) => `key_bench${i}`);
  let n = 0;
  let batch = 0;
  const round = async (size: number) => {
    const at = Date.now();
    // A served round's rows: their times spread over the group commit's 25 ms round gap.
    const usage = Array.from(
      { length: size },
      (_, i) => usageRow(n, keyIds[n++ % keys]!, at - 25 + Math.floor(i * 25 / size)),
    );
    const money = new Map<string, { keyId: string; spent: bigint; credited: bigint }>();
    for (const u of usage) {
      const m = money.get(u.keyId) ?? { keyId: u.keyId, spent: 0n, credited: 0n };
      m.spent += u.charged;
      money.set(u.keyId, m);
    }
    await store.commit({ id: `cb_bench${batch++}`, money: [...money.values()], usage, at });
  };
  return {
    async measure(rowsPerRound, rows) {
      for (let i = 0; i < 100; i++) await round(rowsPerRound);
      const rounds = Math.max(1, Math.round(rows / rowsPerRound));
      const before = await threadJiffies(Deno.pid);
      const t0 = performance.now();
      for (let i = 0; i < rounds; i++) await round(rowsPerRound);
      const wall = performance.now() - t0;
      const after = await threadJiffies(Deno.pid);
      const done = rounds * rowsPerRound;
      const per = (name: (t: string) => boolean) => {
        let j = 0;
        for (const [t, v] of after) if (name(t)) j += v - (before.get(t) ?? 0);
        return (j * JIFFY_US) / done;
      };
      return {
        rowsPerRound,
        rows: done,
        mainUs: per((t) => t === "main"),
        writerUs: per((t) => t.startsWith("sw-")),
        allUs: per(() => true),
        wallUs: (wall * 1000) / done,
      };
    },
    async stored() {
      let count = 0;
      for (const keyId of keyIds) {
        let after: string | undefined;
        do {
          const page = await store.listUsage(keyId, after ? { limit: 1000, after } : { limit: 1000 });
          count += page.rows.length;
          after = page.next;
        } while (after);
      }
      return count;
    },
    close: () => store.close(),
  };
}

if (import.meta.main) {
  const sizes = (Deno.args[0] ?? "8,30,60,150,300").split(",").map(Number);
  const rows = Number(Deno.args[1] ?? 40_000);
  const dir = await Deno.makeTempDir({ prefix: "gw-commit-cost-" });
  const bench = await commitCostBench(dir, envNum("COMMIT_COST_KEYS", 1));
  try {
    for (const size of sizes) {
      const c = await bench.measure(size, rows);
      console.log(
        `${String(size).padStart(4)} rows a round: ${c.allUs.toFixed(1)} µs CPU per row (main thread ` +
          `${c.mainUs.toFixed(1)}, SQLite writer ${c.writerUs.toFixed(1)}), ${c.wallUs.toFixed(1)} µs wall`,
      );
    }
  } finally {
    await bench.close();
    await Deno.remove(dir, { recursive: true });
  }
}
