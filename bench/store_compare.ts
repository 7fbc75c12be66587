/**
 * A rough comparison of the two stores (not part of `deno task bench`): the latency of a group commit and
 * of one usage-report page read, on a Deno KV file and on Postgres.
 *
 *   deno run -A --unstable-kv bench/store_compare.ts postgres://user:pass@127.0.0.1:5432/db
 *
 * Postgres runs in a fresh schema of that database, dropped at the end. Commits are sequential, as the
 * group committer issues them (one in flight); a batch is N settlements: N key deltas + N usage rows.
 */
import postgres from "postgres";
import { KvStore } from "../src/store/kv_store.ts";
import { PgStore } from "../src/store/pg_store.ts";
import type { Store } from "../src/store/store.ts";
import { batchId, keyRecord, usageRow } from "../src/store/test_fixtures.ts";

const url = Deno.args[0];
if (!url) {
  console.error("usage: store_compare.ts postgres://…");
  Deno.exit(2);
}
const COMMITS = 400;
const REPORT_ROWS = 20_000;
const READS = 200;
/** The report scans in chunks of 200 rows (src/reports/report.ts SCAN_CHUNK). */
const PAGE = 200;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(2)} ms, p99 ${pct(xs, 0.99).toFixed(2)} ms`;

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

async function measure(name: string, store: Store): Promise<void> {
  const keys = Array.from({ length: 50 }, (_, i) => `key_${String(i).padStart(3, "0")}`);
  for (const id of keys) await store.createKey(keyRecord(id, { hash: `h_${id}`, credited: 10n ** 15n }));
  let seq = 0;
  const batch = (n: number) => {
    const rows = Array.from({ length: n }, () => {
      const k = keys[seq % keys.length]!;
      return usageRow(`req_${String(seq++).padStart(9, "0")}`, k, { createdAt: 1_700_000_000_000 + seq });
    });
    return {
      id: batchId(),
      money: rows.map((r) => ({ keyId: r.keyId, spent: r.charged, credited: 0n })),
      usage: rows,
    };
  };
  for (const n of [1, 10, 50]) {
    const lat = await timed(COMMITS, () => store.commit(batch(n)));
    console.log(`${name}: commit of ${n} settlement(s): ${fmt(lat)}`);
  }
  // One key with REPORT_ROWS rows among the others' rows.
  for (let i = 0; i < REPORT_ROWS; i += 500) {
    const rows = Array.from(
      { length: 500 },
      (_, j) =>
        usageRow(`rep_${String(i + j).padStart(9, "0")}`, "key_report", {
          createdAt: 1_600_000_000_000 + i + j,
        }),
    );
    await store.commit({ id: batchId(), money: [], usage: rows });
  }
  const first = await timed(READS, () => store.listUsage("key_report", { limit: PAGE }));
  console.log(`${name}: usage page of ${PAGE} rows, first page: ${fmt(first)}`);
  // A cursor deep into the rows: the page after row 15,000.
  let after: string | undefined;
  for (let i = 0; i < 15_000 / PAGE; i++) {
    after = (await store.listUsage("key_report", { limit: PAGE, after })).next;
  }
  const deep = await timed(READS, () => store.listUsage("key_report", { limit: PAGE, after: after! }));
  console.log(`${name}: usage page of ${PAGE} rows, after 15,000 rows: ${fmt(deep)}`);
  const small = await timed(READS, () => store.listUsage("key_report", { limit: 20, after: after! }));
  console.log(`${name}: usage page of 20 rows, after 15,000 rows: ${fmt(small)}`);
}

const dir = await Deno.makeTempDir({ prefix: "store_compare_" });
const kv = await KvStore.open(`${dir}/gateway.kv`);
try {
  await measure("kv file", kv);
} finally {
  await kv.close();
  await Deno.remove(dir, { recursive: true });
}

const schema = `store_compare_${Date.now()}`;
const admin = postgres(url, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE SCHEMA ${schema}`);
const pgUrl = new URL(url);
pgUrl.searchParams.set("search_path", schema);
const pg = await PgStore.open(pgUrl.toString());
try {
  await measure("postgres", pg);
} finally {
  await pg.close();
  await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}
