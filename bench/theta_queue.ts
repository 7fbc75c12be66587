/**
 * Theta account queue (src/families/theta/account_pool.ts): AccountPool driven in-process — no
 * HTTP, what is measured is the queue — on KV in memory, a KV file and Postgres. Part of `deno task bench`,
 * also runnable alone (then it replaces only its own section of bench/RESULTS.md):
 *
 *   deno run -A --unstable-kv bench/theta_queue.ts
 *
 * - Free account: acquire then release, one at a time, each acquire once the previous release is stored.
 * - Contention: ACCOUNTS accounts, WORKERS closed loops of as many keys (acquire → hold HOLD_MS → release)
 *   for CONTENTION_MS: grants/s, the acquire's wait p50/p99, and per loop (the same work each) its grants
 *   and mean wait, fewest and most.
 * - Arrival order: one account held, WAITERS waiters of as many keys enqueued one by one (each ticket stored
 *   before the next waiter comes), then the account released: inversions of the grant order against the
 *   arrival order (target 0), and each hand-off, a release → the next waiter's grant.
 * Contention and arrival order run again with a second process (bench/theta_queue_peer.ts) on the same KV
 * file or Postgres schema: half the loops there, the waiters alternating between the two. The database is
 * BENCH_DATABASE_URL or TEST_DATABASE_URL (a fresh schema, dropped at the end); without one the Postgres rows
 * are skipped and a previous record of the section is kept.
 */
import { normalize, POOL_DOCUMENT, type PoolDoc, ticketState } from "../src/families/theta/pool_state.ts";
import { freshSchema } from "../src/store/testing/pg_test_schema.ts";
import type { Store } from "../src/store/store.ts";
import { catProc, childrenOf, type CpuUse, withCpu } from "./cpu.ts";
import { percentile } from "./load.ts";
import { ROOT } from "./procs.ts";
import { grid, ms, num } from "./report.ts";
import { sectionOf, THETA_HEADING, withSection } from "./sections.ts";
import { database } from "./shared_stores.ts";
import {
  clock,
  contend,
  type Contended,
  type Held,
  HOLD_MS,
  holdOnce,
  lines,
  newPool,
  openStore,
  poolConfig,
  sleep,
  STAYS,
  type StoreSpec,
  type WorkerResult,
} from "./theta_queue_work.ts";

const WARMUP = 100;
const ITERATIONS = 2_000;
const ACCOUNTS = 3;
const WORKERS = 30;
const CONTENTION_MS = 3_000;
const WAITERS = 20;
const ROUNDS = 3;
/** The contention run starts this long after it is sent, so the peer's loops start with the bench's. */
const START_DELAY_MS = 300;

interface Runs {
  free: { label: string; ms: Float64Array }[];
  contention: ({ label: string } & Contention)[];
  order: ({ label: string } & Order)[];
}

interface Contention {
  workers: WorkerResult[];
  /** Pool transactions of every process within the window. */
  transactions: number;
  /** Cores each process used from the start of the window until the last loop ended. */
  cpu: CpuUse;
  /** Grants of the bench process's loops and of the peer's, with a peer. */
  split?: [number, number];
}

interface Order {
  inversions: number;
  /** Release → the next waiter's grant, sorted, ms. */
  handoffs: Float64Array;
}

/** The section's Markdown; `pgSkipped` says why the Postgres rows are missing. */
export interface ThetaResult {
  section: string;
  pgSkipped?: string;
}

export async function benchThetaQueue(
  o: { log: (s: string) => void; command: string },
): Promise<ThetaResult> {
  const loadStart = await loadavg();
  const runs: Runs = { free: [], contention: [], order: [] };
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-theta-" });
  try {
    await runBackend("KV in memory", { kind: "kv", path: ":memory:" }, runs, o.log);
    await runBackend("KV file", { kind: "kv", path: `${dir}/theta.kv` }, runs, o.log);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const db = await database();
  if (typeof db === "string") {
    o.log(`  Postgres ${db}`);
  } else {
    const schema = await freshSchema(db.url);
    try {
      await runBackend("Postgres", { kind: "pg", url: schema.url }, runs, o.log, db.postmaster);
    } finally {
      await schema.drop();
    }
  }
  const facts = typeof db === "string" ? db : `${db.facts}; from ${db.from}`;
  const section = render(runs, facts, o.command, `${loadStart} → ${await loadavg()}`);
  return typeof db === "string" ? { section, pgSkipped: db } : { section };
}

/** One store under test: its handle in the bench process, the peer on it (2 processes), Postgres's server. */
interface Bench {
  store: Store;
  transactions: () => number;
  peer?: Peer;
  /** The local Postgres server's postmaster (its CPU is counted with its children's). */
  postmaster?: number;
}

/** Every run on one store; the 2-process runs unless it is in memory. */
async function runBackend(
  name: string,
  spec: StoreSpec,
  runs: Runs,
  log: (s: string) => void,
  postmaster?: number,
) {
  const opened = await openStore(spec);
  const b: Bench = { ...opened, ...postmaster ? { postmaster } : {} };
  try {
    const free = await freeAcquire(b.store);
    runs.free.push({ label: name, ms: free });
    log(`  ${name}: free account p50 ${ms(percentile(free, 50))}, p99 ${ms(percentile(free, 99))}`);
    const one = `${name}, 1 process`;
    runs.contention.push({ label: one, ...await contention(b) });
    logContention(log, runs.contention.at(-1)!);
    runs.order.push({ label: one, ...await arrival(b) });
    logOrder(log, runs.order.at(-1)!);
    if (spec.kind === "kv" && spec.path === ":memory:") return;
    b.peer = await startPeer(spec);
    try {
      const two = `${name}, 2 processes`;
      runs.contention.push({ label: two, ...await contention(b) });
      logContention(log, runs.contention.at(-1)!);
      runs.order.push({ label: two, ...await arrival(b) });
      logOrder(log, runs.order.at(-1)!);
    } finally {
      await b.peer.stop();
    }
  } finally {
    await b.store.close();
  }
}

const holderId = () => `bench_${crypto.randomUUID()}`;

/** Acquire → release ITERATIONS times (after WARMUP), each acquire on a pool with nothing held or waiting. */
async function freeAcquire(store: Store): Promise<Float64Array> {
  const pool = newPool(store, holderId(), ACCOUNTS);
  const samples = new Float64Array(ITERATIONS);
  for (let i = -WARMUP; i < ITERATIONS; i++) {
    const t0 = performance.now();
    const grant = await pool.acquire({
      id: crypto.randomUUID(),
      keyId: "free",
      session: "free",
      signal: STAYS,
    });
    if (i >= 0) samples[i] = performance.now() - t0;
    grant.release();
    await until(store, ACCOUNTS, idle);
  }
  return samples.sort();
}

async function contention(b: Bench): Promise<Contention> {
  const pool = newPool(b.store, holderId(), ACCOUNTS);
  const keys = Array.from({ length: WORKERS }, (_, i) => `c${i}`);
  const start = clock() + START_DELAY_MS;
  const end = start + CONTENTION_MS;
  const half = b.peer ? WORKERS / 2 : WORKERS;
  const pids = {
    bench: Deno.pid,
    ...b.peer ? { peer: b.peer.pid } : {},
    ...b.postmaster ? { postgres: [b.postmaster, ...await childrenOf(b.postmaster)] } : {},
  };
  const [[mine, theirs], cpu] = await withCpu(pids, () =>
    Promise.all([
      contend(pool, keys.slice(0, half), start, end, b.transactions),
      b.peer ? b.peer.contend(keys.slice(half), start, end) : { workers: [], transactions: 0 },
    ]));
  await until(b.store, ACCOUNTS, idle); // the last releases stored before the next run
  const grants = (c: Contended) => c.workers.reduce((n, w) => n + w.waits.length, 0);
  return {
    workers: [...mine.workers, ...theirs.workers],
    transactions: mine.transactions + theirs.transactions,
    cpu,
    ...b.peer ? { split: [grants(mine), grants(theirs)] } : {},
  };
}

/** ROUNDS rounds of WAITERS waiters arriving in a known order behind one held account. */
async function arrival({ store, peer }: Bench): Promise<Order> {
  const pool = newPool(store, holderId(), 1);
  let inversions = 0;
  const handoffs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const first = await pool.acquire({ id: `r${r}`, keyId: "first", session: "first", signal: STAYS });
    const holds: Promise<Held>[] = [];
    for (let i = 0; i < WAITERS; i++) {
      const id = `r${r}w${i}`;
      holds.push(peer && i % 2 === 1 ? peer.hold(id, `a${i}`) : holdOnce(pool, id, `a${i}`));
      await until(store, 1, (doc) => ticketState(doc, id).kind !== "gone");
    }
    let released = clock();
    first.release();
    const granted = (await Promise.all(holds)).map((h, arrived) => ({ arrived, ...h }))
      .sort((a, b) => a.grantedAt - b.grantedAt);
    inversions += countInversions(granted.map((g) => g.arrived));
    for (const g of granted) {
      handoffs.push(g.grantedAt - released);
      released = g.releasedAt;
    }
    await until(store, 1, idle);
  }
  return { inversions, handoffs: Float64Array.from(handoffs).sort() };
}

/** Pairs granted in the opposite order to their arrival. */
function countInversions(order: number[]): number {
  let n = 0;
  for (let i = 0; i < order.length; i++) {
    for (let j = i + 1; j < order.length; j++) if (order[i]! > order[j]!) n++;
  }
  return n;
}

const idle = (doc: PoolDoc) => doc.queue.length === 0 && doc.accounts.every((a) => a.busy === null);

/** Reads the pool (writing nothing) until `ok`, a millisecond apart. */
async function until(store: Store, accounts: number, ok: (doc: PoolDoc) => boolean) {
  const cfg = poolConfig(accounts);
  while (
    !await store.updateDocument(
      POOL_DOCUMENT,
      (doc) => ({ doc: null, result: ok(normalize(doc, Date.now(), cfg)) }),
    )
  ) {
    await sleep(1);
  }
}

/** The second process (bench/theta_queue_peer.ts). */
interface Peer {
  pid: number;
  contend(keys: string[], start: number, until: number): Promise<Contended>;
  hold(id: string, key: string): Promise<Held>;
  /** Ends its stdin (it closes its store and exits) and waits for it. */
  stop(): Promise<void>;
}

async function startPeer(spec: StoreSpec): Promise<Peer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "bench/theta_queue_peer.ts", JSON.stringify(spec)],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const input = child.stdin.getWriter();
  const encoder = new TextEncoder();
  // Answers awaited, by the op ("ready", "contend") or the waiter's id.
  const waiting = new Map<string, PromiseWithResolvers<any>>();
  const answer = <T>(tag: string): Promise<T> => {
    const w = Promise.withResolvers<T>();
    waiting.set(tag, w);
    return w.promise;
  };
  const ask = <T>(tag: string, m: Record<string, unknown>): Promise<T> => {
    const a = answer<T>(tag);
    input.write(encoder.encode(JSON.stringify(m) + "\n")).catch((err) => waiting.get(tag)?.reject(err));
    return a;
  };
  const ready = answer<void>("ready");
  const reading = (async () => {
    for await (const line of lines(child.stdout)) {
      const m = JSON.parse(line);
      const tag = m.op === "hold" ? m.id : m.op;
      waiting.get(tag)?.resolve(m.op === "contend" ? m.contended : m.held);
      waiting.delete(tag);
    }
    for (const w of waiting.values()) w.reject(new Error("the theta queue peer exited"));
  })();
  await ready;
  return {
    pid: child.pid,
    contend: (keys, start, until) =>
      ask("contend", { op: "contend", accounts: ACCOUNTS, keys, start, until }),
    hold: (id, key) => ask(id, { op: "hold", accounts: 1, id, key }),
    async stop() {
      await input.close();
      await reading;
      const status = await child.status;
      if (!status.success) throw new Error(`the theta queue peer exited with ${status.code}`);
    },
  };
}

const loadavg = async () => (await catProc(["/proc/loadavg"])).split(" ").slice(0, 3).join(" ");

/** A contention run's figures: the grants within the window, their waits, and per loop (fewest, most). */
function summary(c: Contention) {
  const waits = Float64Array.from(c.workers.flatMap((w) => w.waits)).sort();
  const grants = c.workers.map((w) => w.waits.length);
  const means = c.workers.map((w) => w.waits.reduce((s, x) => s + x, 0) / w.waits.length);
  return {
    waits,
    perSecond: waits.length / (CONTENTION_MS / 1000),
    transactionsPerGrant: c.transactions / waits.length,
    grants: [Math.min(...grants), Math.max(...grants)] as const,
    means: [Math.min(...means), Math.max(...means)] as const,
  };
}

function logContention(log: (s: string) => void, c: { label: string } & Contention): void {
  const s = summary(c);
  log(
    `  ${c.label}: ${num(s.perSecond)} grants/s, wait p50 ${ms(percentile(s.waits, 50))}, p99 ${
      ms(percentile(s.waits, 99))
    }; ${s.transactionsPerGrant.toFixed(1)} transactions a grant; per loop ${s.grants[0]}–${
      s.grants[1]
    } grants${c.split ? ` (bench process ${c.split[0]}, peer ${c.split[1]})` : ""}`,
  );
}

function logOrder(log: (s: string) => void, r: { label: string } & Order): void {
  log(
    `  ${r.label}: ${r.inversions} inversions, hand-off p50 ${ms(percentile(r.handoffs, 50))}, max ${
      ms(percentile(r.handoffs, 100))
    }`,
  );
}

function render(runs: Runs, db: string, command: string, load: string): string {
  const pct = (a: Float64Array, ps: number[]) => ps.map((p) => ms(percentile(a, p))).join(" / ");
  return [
    `## ${THETA_HEADING}`,
    "",
    `Command: \`${command}\` (from the repository root)`,
    "",
    `- Date: ${new Date().toISOString()}; ${navigator.hardwareConcurrency} CPUs; load average ` +
    `(1/5/15 min) at start → end: ${load}`,
    `- Postgres: ${db}`,
    "- AccountPool (src/families/theta/account_pool.ts) driven in-process, no HTTP: the store's " +
    "pool document (updateDocument) and change signal (watchDocument) are what is measured. Pools " +
    "as the gateway makes them (LEASE_TTL_MS 30 s, queue timeout 30 s) but THETA_IDLE_RELEASE_MS = 0, " +
    "so a released account is free for any key and every grant goes through the shared queue.",
    "",
    "Free account: acquire then release, one at a time (the next acquire once the release is " +
    `stored), ${num(ITERATIONS)} times after ${WARMUP} not counted:`,
    "",
    grid(
      ["Store", "p50 / p99 / max"],
      runs.free.map((f) => [f.label, pct(f.ms, [50, 99, 100])]),
      [false, true],
    ),
    "",
    `Contention: ${ACCOUNTS} accounts, ${WORKERS} closed loops of ${WORKERS} keys, acquire → hold ` +
    `${HOLD_MS} ms → release, ${CONTENTION_MS / 1000} s; with 2 processes, ${WORKERS / 2} loops in each:`,
    "",
    grid(
      [
        "Store, processes",
        "Grants/s",
        "Wait p50 / p99 / max",
        "Pool transactions per grant",
        "Grants per loop: fewest–most",
        "Mean wait per loop: shortest–longest",
        "Grants: bench process / peer",
        "CPU (cores): bench process / peer / Postgres / other processes",
      ],
      runs.contention.map((c) => {
        const s = summary(c);
        return [
          c.label,
          num(s.perSecond),
          pct(s.waits, [50, 99, 100]),
          s.transactionsPerGrant.toFixed(1),
          `${s.grants[0]}–${s.grants[1]}`,
          `${ms(s.means[0])}–${ms(s.means[1])} (×${(s.means[1] / s.means[0]).toFixed(2)})`,
          c.split ? `${num(c.split[0])} / ${num(c.split[1])}` : "—",
          [...["bench", "peer", "postgres"].map((n) => c.cpu.byName[n]), c.cpu.other]
            .map((x) => x?.toFixed(2) ?? "—").join(" / "),
        ];
      }),
      [false, true, true, true, true, true, true, true],
    ),
    "",
    `Arrival order: 1 account held, ${WAITERS} waiters of ${WAITERS} keys enqueued one by one (each ticket ` +
    `stored before the next comes; with 2 processes, alternately in each), then released; each holds it ` +
    `${HOLD_MS} ms; ${ROUNDS} rounds:`,
    "",
    grid(
      ["Store, processes", "Hand-offs", "Inversions (target 0)", "Hand-off p50 / p99 / max"],
      runs.order.map((r) => [
        r.label,
        num(r.handoffs.length),
        `${r.inversions} (${r.inversions === 0 ? "PASS" : "**FAIL**"})`,
        pct(r.handoffs, [50, 99, 100]),
      ]),
      [false, true, true, true],
    ),
    "",
    "Notes:",
    "",
    "- An acquire is the ticket's transaction (Postgres: begin, the row's lock, the write with its " +
    "NOTIFY, commit) and, when the process had nothing waiting or held, the start of its change " +
    "signal (KV: a watch and a 100 ms versionstamp poll; Postgres: LISTEN), not awaited; a release is " +
    "one transaction, after which the free run waits (outside the timing) until the pool shows " +
    "nothing held.",
    "- A change to the pool (an enqueue, a release) leaves its document as its process's view, and that " +
    "process's waiters look at it without a read of their own; another process reads the pool once per " +
    "change it hears of (its change signal), for all its waiters (src/families/theta/account_pool.ts). " +
    "'Pool transactions per grant' counts every process's transactions in the window. What bounds " +
    `grants/s here (${ACCOUNTS} accounts held ${HOLD_MS} ms each could serve up to ` +
    `${num(ACCOUNTS * 1000 / HOLD_MS)} grants/s): the pool row's transactions, one at a time (Postgres: ` +
    "under its lock; KV: check and set), the bench process's event loop on KV in one process (CPU " +
    "column), and the versionstamp poll on KV across processes.",
    "- Hand-off: from the holder's release (before its transaction) to the next waiter's acquire " +
    "returning, on clock() = performance.timeOrigin + performance.now() of each one's process (the " +
    "same machine's clock).",
    "- 2 processes: the peer is a process of its own (bench/theta_queue_peer.ts), not a second store " +
    "handle in the bench's: `kv.watch` hears every handle of one KV file within a process (workers " +
    "too), so only another process shows what KV waiters hear of each other — the versionstamp poll " +
    "every 100 ms (src/store/kv_documents.ts KV_WATCH_POLL_MS); Postgres waiters hear each other by " +
    "NOTIFY. A KV hand-off to the other process waits for that process's next poll, so the two " +
    "directions add up to about one poll period; each process's poll starts with its first waiter, " +
    "and when both start together (as in the arrival-order run, and whenever a burst reaches both at " +
    "once) each direction takes nearly the whole period.",
    "",
  ].join("\n");
}

/** The section of `r`; the previous one when this run skipped Postgres and a record exists. */
export function thetaSection(r: ThetaResult, previous: string): string {
  return (r.pgSkipped && sectionOf(previous, THETA_HEADING)) || r.section;
}

if (import.meta.main) {
  const log = (s: string) => console.error(s);
  const r = await benchThetaQueue({ log, command: "deno run -A --unstable-kv bench/theta_queue.ts" });
  console.log(r.section);
  const file = `${ROOT}bench/RESULTS.md`;
  const previous = await Deno.readTextFile(file).catch(() => "");
  await Deno.writeTextFile(file, withSection(previous, THETA_HEADING, thetaSection(r, previous)));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", file], stdout: "null" }).output();
  log(`\nwritten ${file}`);
}
