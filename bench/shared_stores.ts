/**
 * Shared stores (docs/ledger_leases.md): the last section of `deno task bench`, also runnable alone
 * (then it replaces only its own section of bench/RESULTS.md):
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort bench/shared_stores.ts
 *
 * Non-streaming chat on one well-funded key, billing on, CONCURRENCY closed-loop connections, through one
 * gateway process on a KV file, one on Postgres, and WORKERS=2 on Postgres (`main.ts` subprocesses in front of
 * the simulator): req/s and p50/p99; on Postgres the round trips per request by statement, counted on the wire
 * (bench/pg_wire.ts) over the measured window, and the lease takes per second; and the settlement durability
 * window (the group commit's lag from GET /metrics of every worker, and the commit statement's own time on the
 * wire). The database is BENCH_DATABASE_URL or TEST_DATABASE_URL (`. .ci/postgres.sh && pg_start`); each
 * Postgres run gets a fresh schema, dropped at the end. Without a reachable database the section is skipped.
 */
import postgres from "postgres";
import { freshSchema, type TestSchema } from "../src/store/testing/pg_test_schema.ts";
import { describeDatabase } from "../src/store/pg_url.ts";
import { catProc, childrenOf, type CpuUse, formatCpu, withCpu } from "./cpu.ts";
import { envNum } from "./env.ts";
import { type LoadResult, percentile, runLoad } from "./load.ts";
import {
  ADMIN_TOKEN,
  createKey,
  type Proc,
  ROOT,
  startGatewayProc,
  startSim,
  stopOnSignal,
} from "./procs.ts";
import { PgWireCounter, type StatementTrips } from "./pg_wire.ts";
import { commandLine, grid, ms, num } from "./report.ts";
import { chat, PATH } from "./scenarios.ts";
import { sectionOf, SHARED_HEADING, withSection } from "./sections.ts";

const CONCURRENCY = 32;
/** After the load: the last settlements' group commits (interval 5 ms) land before the count is read. */
const SETTLE_MS = 200;

type StoreKind = "kv" | "pg";
interface Setup {
  label: string;
  store: StoreKind;
  workers: number;
}

const SETUPS: Setup[] = [
  { label: "KV file, 1 process", store: "kv", workers: 1 },
  { label: "Postgres, 1 process", store: "pg", workers: 1 },
  { label: "Postgres, WORKERS=2", store: "pg", workers: 2 },
];

/** What a statement is there for, by its SQL (src/store/pg_commit.ts COMMIT_SQL, src/store/pg_ledger.ts,
 *  KeyRefresh's keyChanges, the client's own); the rest is "other": the hot path's, whose target is zero. */
const KINDS = [
  ["group commit", /INSERT INTO usage_rows/],
  [
    "lease take",
    /^(begin|commit|rollback)$|FROM keys WHERE id = \$1 FOR UPDATE|WITH expired AS|^INSERT INTO leases/i,
  ],
  ["lease renewal", /^UPDATE leases SET expires_at/],
  ["key refresh", /WHERE changed_at >= /],
  // postgres.js reads the array types once on each new connection of its pool.
  ["connection setup", /FROM pg_catalog\.pg_type/i],
] as const;
type Kind = typeof KINDS[number][0] | "other";
/** A take's first statement, the lock of its key: one per take (src/store/pg_ledger.ts takeOnce). */
const TAKE_LOCK = /FROM keys WHERE id = \$1 FOR UPDATE/;

const kindOf = (sql: string): Kind => KINDS.find(([, re]) => re.test(sql))?.[0] ?? "other";

interface Trips {
  total: number;
  byKind: Map<Kind, number>;
  /** Unclassified statements (opening words) and their round trips. */
  other: Map<string, number>;
  takes: number;
  /** Times of the group commit statements, sorted, ms. */
  commitMs: Float64Array;
  windowMs: number;
  /** Connections that asked for TLS: not counted. */
  encrypted: number;
}

/** The group commit's own figures (GET /metrics), summed over the workers, over the measured window. The
 *  gateway keeps only its lifetime max: the one before the window, and the one after it (the window's own when
 *  larger). */
interface Lag {
  commits: number;
  meanMs: number;
  maxBeforeMs: number;
  maxMs: number;
  rows: number;
  failures: number;
}

interface Run {
  setup: Setup;
  load: LoadResult;
  cpu: CpuUse;
  lag: Lag;
  trips?: Trips;
}

export interface SharedOptions {
  seconds: number;
  warmup: number;
  log: (s: string) => void;
  /** Processes started here are added, so the caller's signal handler stops them too. */
  procs: Proc[];
  /** The command recorded in the section. */
  command: string;
}

/** The section's Markdown, or why it was skipped. */
export type SharedResult = { section: string } | { skipped: string };

interface Database {
  url: string;
  from: string;
  facts: string;
  /** The server's postmaster when it runs on this machine (its children's CPU is counted). */
  postmaster?: number;
}

export async function benchSharedStores(o: SharedOptions): Promise<SharedResult> {
  const db = await database();
  if (typeof db === "string") return { skipped: db };
  o.log(`shared stores: ${db.from} ${db.facts}`);
  const sim = await startSim();
  o.procs.push(sim);
  const runs: Run[] = [];
  try {
    for (const setup of SETUPS) runs.push(await runSetup(setup, sim, db, o));
  } finally {
    await sim.stop();
  }
  return { section: render(runs, db, o) };
}

/** The database to use (BENCH_DATABASE_URL, else TEST_DATABASE_URL), or the note saying why there is none;
 *  also the theta queue's (bench/theta_queue.ts). */
export async function database(): Promise<Database | string> {
  const from = Deno.env.get("BENCH_DATABASE_URL") ? "BENCH_DATABASE_URL" : "TEST_DATABASE_URL";
  const url = Deno.env.get(from);
  if (!url) {
    return "skipped: neither BENCH_DATABASE_URL nor TEST_DATABASE_URL is set " +
      "(`. .ci/postgres.sh && pg_start` starts a local PostgreSQL and sets TEST_DATABASE_URL)";
  }
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await sql`
      SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync,
        current_setting('synchronous_commit') AS sync, pg_backend_pid() AS pid`;
    const host = new URL(url).hostname;
    const local = ["127.0.0.1", "localhost", "[::1]"].includes(host);
    const ppid = local
      ? Number((await catProc([`/proc/${row!.pid}/stat`])).split(") ")[1]?.split(" ")[1])
      : NaN;
    return {
      url,
      from: `${from} (${describeDatabase(url)})`,
      facts: `PostgreSQL ${row!.version}, fsync ${row!.fsync}, synchronous_commit ${row!.sync}`,
      ...(ppid > 1 ? { postmaster: ppid } : {}),
    };
  } catch (err) {
    return `skipped: Postgres from ${from} (${describeDatabase(url)}) did not answer: ${
      err instanceof Error ? err.message : err
    }`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function runSetup(setup: Setup, sim: Proc, db: Database, o: SharedOptions): Promise<Run> {
  let dataDir: string | undefined, schema: TestSchema | undefined, wire: PgWireCounter | undefined;
  try {
    if (setup.store === "kv") dataDir = await Deno.makeTempDir({ prefix: "gw-bench-shared-" });
    else {
      schema = await freshSchema(db.url);
      wire = await PgWireCounter.start(schema.url);
    }
    const env: Record<string, string> = wire
      ? { DATABASE_URL: wire.url, WORKERS: String(setup.workers) }
      : { DATABASE_URL: "", DATA_DIR: dataDir! };
    const gw = await startGatewayProc(sim.url, { env });
    o.procs.push(gw);
    try {
      await perWorker(gw.url, setup.workers); // every worker serves
      const key = await createKey(gw.url);
      const load = {
        url: gw.url + PATH,
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: chat("Say hello in one short sentence.", false),
        concurrency: CONCURRENCY,
        warmupSeconds: 0,
      };
      o.log(`  ${setup.label}: gateway pid ${gw.pid}, warm-up ${o.warmup} s`);
      await runLoad({ ...load, seconds: o.warmup });
      const pids = {
        client: Deno.pid,
        gateway: [gw.pid, ...setup.workers > 1 ? await childrenOf(gw.pid) : []],
        sim: sim.pid,
        postgres: setup.store === "pg" && db.postmaster
          ? [db.postmaster, ...await childrenOf(db.postmaster)]
          : [],
      };
      const before = await perWorker(gw.url, setup.workers);
      await wire?.reset();
      const t0 = performance.now();
      const [r, cpu] = await withCpu(pids, () => runLoad({ ...load, seconds: o.seconds }));
      await new Promise((res) => setTimeout(res, SETTLE_MS));
      const counted = await wire?.trips();
      const trips = counted && tally(counted.trips, counted.encrypted, performance.now() - t0);
      const run = { setup, load: r, cpu, lag: lagOf(before, await perWorker(gw.url, setup.workers)) };
      logRun(o.log, run, counted?.trips);
      return trips ? { ...run, trips } : run;
    } finally {
      await gw.stop();
    }
  } finally {
    await wire?.close();
    await schema?.drop();
    if (dataDir) await Deno.remove(dataDir, { recursive: true });
  }
}

function logRun(log: (s: string) => void, r: Run, statements?: Map<string, StatementTrips>): void {
  const l = r.load;
  log(
    `  ${r.setup.label}: ${num(l.rps)} req/s, p50 ${ms(percentile(l.latency, 50))}, p99 ${
      ms(percentile(l.latency, 99))
    }, ${l.errors} errors${l.firstError ? ` (first: ${l.firstError})` : ""}; ${formatCpu(r.cpu)}`,
  );
  log(
    `    ${num(l.completed)} requests, commit lag mean ${ms(r.lag.meanMs)}, max before the window ${
      ms(r.lag.maxBeforeMs)
    }, after it ${ms(r.lag.maxMs)}`,
  );
  for (const [sql, t] of statements ?? []) {
    log(`    ${kindOf(sql)}: ${t.runs} runs, ${t.describes} describes: ${sql.slice(0, 90)}`);
  }
}

/**
 * GET /metrics of each of `workers` processes behind one port: a fresh connection per try (the kernel picks
 * the worker of each connection), until every worker number (x-gateway-worker) has answered.
 */
async function perWorker(url: string, workers: number): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  for (let i = 0; i < 300 && seen.size < workers; i++) {
    const client = Deno.createHttpClient({});
    try {
      const res = await fetch(`${url}/metrics`, {
        client,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const text = await res.text();
      if (res.ok) seen.set(res.headers.get("x-gateway-worker") ?? "1", text);
    } catch {
      await new Promise((r) => setTimeout(r, 100)); // a worker still starting
    } finally {
      client.close();
    }
  }
  if (seen.size < workers) throw new Error(`only ${seen.size} of ${workers} workers answered at ${url}`);
  return seen;
}

/** The group commit's figures between two reads of every worker's metrics. */
function lagOf(before: Map<string, string>, after: Map<string, string>): Lag {
  const value = (text: string | undefined, name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text ?? "")?.[1] ?? NaN);
  const delta = (name: string) =>
    [...after].reduce((sum, [worker, text]) => sum + value(text, name) - value(before.get(worker), name), 0);
  const max = (m: Map<string, string>) =>
    Math.max(...[...m.values()].map((t) => value(t, "gateway_group_commit_lag_seconds_max"))) * 1000;
  const commits = delta("gateway_group_commit_lag_seconds_count");
  return {
    commits,
    meanMs: delta("gateway_group_commit_lag_seconds_sum") * 1000 / commits,
    maxBeforeMs: max(before),
    maxMs: max(after),
    rows: delta("gateway_group_commit_batch_rows_sum"),
    failures: delta("gateway_group_commit_failures_total"),
  };
}

function tally(stats: Map<string, StatementTrips>, encrypted: number, windowMs: number): Trips {
  const byKind = new Map<Kind, number>();
  const other = new Map<string, number>();
  const commitMs: number[] = [];
  let total = 0, takes = 0;
  for (const [sql, t] of stats) {
    const trips = t.runs + t.describes;
    const kind = kindOf(sql);
    total += trips;
    byKind.set(kind, (byKind.get(kind) ?? 0) + trips);
    if (kind === "other") other.set(sql.slice(0, 60), (other.get(sql.slice(0, 60)) ?? 0) + trips);
    if (TAKE_LOCK.test(sql)) takes += t.runs;
    if (kind === "group commit") commitMs.push(...t.ms);
  }
  return { total, byKind, other, takes, commitMs: Float64Array.from(commitMs).sort(), windowMs, encrypted };
}

function render(runs: Run[], db: Database, o: SharedOptions): string {
  const pg = runs.filter((r) => r.trips);
  const perReq = (n: number, r: Run) => `${num(n)} (${(n / r.load.completed).toFixed(4)})`;
  const cores = (r: Run, name: string) =>
    r.setup.store === "kv" && name === "postgres" ? "—" : (r.cpu.byName[name] ?? 0).toFixed(2);
  const busy = Math.max(...runs.map((r) => r.cpu.other));
  const encrypted = pg.reduce((s, r) => s + r.trips!.encrypted, 0);
  const hotPath = pg.reduce((s, r) => s + (r.trips!.byKind.get("other") ?? 0), 0);
  const others = pg.flatMap((r) =>
    [...r.trips!.other].map(([sql, n]) => `${r.setup.label}: ${n} × \`${sql}…\``)
  );
  const lines = [
    `## ${SHARED_HEADING}`,
    "",
    `Command: \`${o.command}\` (from the repository root)`,
    "",
    `- Date: ${
      new Date().toISOString()
    }; ${navigator.hardwareConcurrency} CPUs, shared by the load generator, ` +
    "the simulator, the gateway process(es) and Postgres",
    `- Postgres: ${db.facts}; from ${db.from} (\`. .ci/postgres.sh && PG_DURABLE=1 pg_start\` starts a local ` +
    "one with fsync and synchronous_commit on, as a production server; without PG_DURABLE=1 both are off)",
    `- Load: non-streaming chat (\`k3\`) on one key with 100,000 USD, billing on, ${CONCURRENCY} closed-loop ` +
    `fetch connections, ${o.warmup} s warm-up then ${o.seconds} s measured per row; \`main.ts\` subprocesses in ` +
    "front of the simulator subprocess; the KV file row is the default store (one process, its own ledger), the " +
    "Postgres rows use credit leases (src/accounts/lease_ledger.ts).",
    "",
    grid(
      ["Store, processes", "req/s", "p50", "p99", "Errors"],
      runs.map((r) => [
        r.setup.label,
        num(r.load.rps),
        ms(percentile(r.load.latency, 50)),
        ms(percentile(r.load.latency, 99)),
        String(r.load.errors),
      ]),
      [false, true, true, true, true],
    ),
    "",
    "Postgres round trips over the measured window (per request in brackets), counted on the wire:",
    "",
    grid(
      [
        "Store, processes",
        "Requests",
        "Round trips",
        "Group commits",
        "Lease takes: takes / round trips",
        "Takes/s",
        "Renewals",
        "Key refresh",
        "Other (hot path, target 0)",
      ],
      pg.map((r) => {
        const t = r.trips!;
        const k = (kind: Kind) => perReq(t.byKind.get(kind) ?? 0, r);
        return [
          r.setup.label,
          num(r.load.completed),
          perReq(t.total, r),
          k("group commit"),
          `${num(t.takes)} / ${k("lease take")}`,
          num(t.takes / (t.windowMs / 1000), 1),
          k("lease renewal"),
          k("key refresh"),
          k("other"),
        ];
      }),
      [false, true, true, true, true, true, true, true, true],
    ),
    "",
    "Settlement durability window: the group commit over the measured window, summed over the workers (the " +
    "gateway keeps only its lifetime lag max: read before the window and after it); the commit statement's time " +
    "on the wire:",
    "",
    grid(
      [
        "Store, processes",
        "Commits",
        "Rows per commit",
        "Lag mean",
        "Lag max: start and warm-up / measured window",
        "Commit statement p50 / p99 / max",
        "Failures",
      ],
      runs.map((r) => [
        r.setup.label,
        num(r.lag.commits),
        num(r.lag.rows / r.lag.commits, 1),
        ms(r.lag.meanMs),
        `${ms(r.lag.maxBeforeMs)} / ${r.lag.maxMs > r.lag.maxBeforeMs ? ms(r.lag.maxMs) : "none above it"}`,
        r.trips ? [50, 99, 100].map((p) => ms(percentile(r.trips!.commitMs, p))).join(" / ") : "— (embedded)",
        num(r.lag.failures),
      ]),
      [false, true, true, true, true, true, true],
    ),
    "",
    "CPU over the measured window (cores):",
    "",
    grid(
      [
        "Store, processes",
        "Load generator (+ wire counter)",
        "Gateway (all processes)",
        "Gateway CPU per request",
        "Simulator",
        "Postgres",
        "Kernel irq/softirq",
        "Other",
      ],
      runs.map((r) => [
        r.setup.label,
        cores(r, "client"),
        cores(r, "gateway"),
        ms((r.cpu.byName.gateway ?? NaN) * r.load.wallMs / r.load.completed),
        cores(r, "sim"),
        db.postmaster ? cores(r, "postgres") : "n/a (not local)",
        r.cpu.irq.toFixed(2),
        r.cpu.other.toFixed(2),
      ]),
      [false, true, true, true, true, true, true, true],
    ),
    "",
    "Notes:",
    "",
    ...busy > 0.2
      ? [
        `- Other processes on the machine used up to ${
          busy.toFixed(2)
        } of the ${navigator.hardwareConcurrency} cores during a measured ` +
        "window (CPU table): that row's figures are pessimistic.",
      ]
      : [],
    "- Round trips are counted by bench/pg_wire.ts, a proxy between the gateway and Postgres (in a worker " +
    "thread of the bench process, so the load generator's event loop does not delay it): every Sync, simple " +
    "Query and Describe-Flush the gateway's client sends, by statement. So a store call counts what it costs: a " +
    "lease take is a transaction (begin, the key's lock, the lease sums, the upsert, commit; a statement sent " +
    "unprepared is described first, one more round trip), a group commit is one statement. 'Connection setup' is " +
    "the client's type query on each new pooled connection. The proxy adds a loopback hop to every round trip.",
    ...encrypted > 0
      ? [
        `- ${encrypted} connection(s) asked for TLS: the proxy cannot read them, their round trips are missing.`,
      ]
      : [],
    `- Hot path: ${hotPath} round trips outside group commits, lease takes, renewals and key refreshes ` +
    `(target 0: ${hotPath === 0 ? "PASS" : "**FAIL**"})${others.length ? ` — ${others.join("; ")}` : ""}.`,
    "- Lag: from the oldest settlement waiting in a round to that round's commit returning (src/accounts/" +
    "group_commit.ts), i.e. the window a kill -9 may lose (SETTLE_DURABILITY_MS, docs/ledger_leases.md); the gateway exports its " +
    "mean and max (GET /metrics), not its percentiles, so the p50/p99 column is the commit statement alone.",
    "- Takes/s: lease takes (the lock statement, one per take) per second of the measured window, over all " +
    "workers; each holds the request that needed it for the transaction's round trips.",
    "- Two cores: the load generator, the simulator and Postgres use about one of them, so WORKERS=2 has no " +
    "core of its own to scale onto here; its row shows what leases cost across processes, not the scaling. " +
    "Gateway CPU per request is its processes' CPU time over the requests completed.",
    "",
  ];
  return lines.join("\n");
}

/** The shared-store section of `previous` kept when this run skipped it (a note when there was none). */
export function sharedSection(r: SharedResult, previous: string): string {
  if ("section" in r) return r.section;
  return sectionOf(previous, SHARED_HEADING) || `## ${SHARED_HEADING}\n\n${r.skipped}\n`;
}

if (import.meta.main) {
  const seconds = envNum("BENCH_SECONDS", 4);
  const warmup = envNum("BENCH_WARMUP", 1);
  const procs: Proc[] = [];
  const unhook = stopOnSignal(procs);
  const log = (s: string) => console.error(s);
  try {
    const r = await benchSharedStores({
      seconds,
      warmup,
      log,
      procs,
      command: commandLine(
        seconds,
        "deno run -A --unstable-kv --unstable-no-legacy-abort bench/shared_stores.ts",
      ),
    });
    if ("skipped" in r) {
      log(r.skipped);
    } else {
      console.log(r.section);
      const file = `${ROOT}bench/RESULTS.md`;
      const doc = await Deno.readTextFile(file).catch(() => "");
      await Deno.writeTextFile(file, withSection(doc, SHARED_HEADING, r.section));
      await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", file], stdout: "null" }).output();
      log(`\nwritten ${file}`);
    }
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    unhook();
  }
}
