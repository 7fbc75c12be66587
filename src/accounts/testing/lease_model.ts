/**
 * TEST SUPPORT ONLY — used by lease_model_test.ts, never by the gateway. A seeded simulator of the leasing
 * ledger (lease_ledger.ts, docs/ledger_leases.md) in the spirit of TigerBeetle's simulator: several simulated
 * processes (LeaseLedger instances, one holder id each) share one real store, and a PRNG drives a random
 * sequence of holds, settlements (below and above the hold), top-ups, caps set / changed / lifted through
 * any process (each process reads them at an explicit refresh step, as when KEY_REFRESH_MS elapses for it, or
 * from the store at its next take), clock moves (across UTC hours and days, and past LEASE_TTL_MS), a process
 * killed with holds open and a process restarted. The simulator owns time: the ledgers run on its clock,
 * their own timers are never started (withoutTimers), and what those timers would do (renewal, idle
 * give-back, the group commit) is done by explicit steps; a settlement is durable when the store answered the
 * commit carrying it. After every step it checks the money and cap invariants against its model (#check); a
 * hold the model says must be admitted and is refused is a liveness failure (#mustAdmit). A failure throws
 * with the seed, the step and the last operations, for replay.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import type { Store } from "../../store/store.ts";
import { keyRecord, usageRow } from "../../store/testing/test_fixtures.ts";
import type {
  Caps,
  CommitBatch,
  KeyRecord,
  LeaseDecision,
  LeaseTake,
  LeaseView,
  UsageRow,
} from "../../store/types.ts";
import { type Account, newAccount } from "../account.ts";
import type { CapCodes } from "../caps.ts";
import { LeaseLedger } from "../lease_ledger.ts";
import { ledgerEntry } from "../ledger_entry.ts";
import { DAY, HOUR } from "../windows.ts";
import { Logger } from "../../util/log.ts";
import { mulberry32 } from "../../util/seeded_random.ts";

class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  float(): number {
    return this.#next();
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.#next() * (hi - lo + 1));
  }
  /** A bigint in [lo, hi] (bounds below 2^53). */
  big(lo: bigint, hi: bigint): bigint {
    return BigInt(this.int(Number(lo), Number(hi)));
  }
  chance(p: number): boolean {
    return this.#next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.#next() * xs.length)]!;
  }
}

const CODES: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};
const CREDIT_CODES = new Set(["insufficient_credit", "request_reserve_exceeds_credit"]);
const CAP_CODES = new Set(Object.values(CODES));

type CapKind = keyof Caps;
const KINDS: readonly CapKind[] = ["hourlySpend", "dailySpend", "hourlyReserve", "dailyReserve"];
const isHourly = (k: CapKind) => k === "hourlySpend" || k === "hourlyReserve";
const isSpend = (k: CapKind) => k === "hourlySpend" || k === "dailySpend";
const anyCap = (c: Caps) => KINDS.some((k) => c[k] !== null);
const noCaps = (): Caps => ({ hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null });
const fmtCaps = (c: Caps) =>
  KINDS.filter((k) => c[k] !== null).map((k) => `${k}=${c[k]}`).join(",") || "none";
const hourOf = (t: number) => t - (t % HOUR);
const dayOf = (t: number) => t - (t % DAY);
const sum = (xs: Iterable<bigint>) => {
  let s = 0n;
  for (const x of xs) s += x;
  return s;
};
const min = (a: bigint, b: bigint) => a < b ? a : b;
const max = (a: bigint, b: bigint) => a > b ? a : b;

/**
 * Builds a ledger with its background timers (renewal, idle give-back) never started: the simulator calls
 * what they would. The fake ids are negative, so clearing them on close never clears a real timer.
 */
function withoutTimers<T>(make: () => T): T {
  const g = globalThis as unknown as Record<"setInterval" | "setTimeout", unknown>;
  const real = { setInterval: g.setInterval, setTimeout: g.setTimeout };
  let fake = -1;
  g.setInterval = () => fake--;
  g.setTimeout = () => fake--;
  try {
    return make();
  } finally {
    g.setInterval = real.setInterval;
    g.setTimeout = real.setTimeout;
  }
}

/** What the simulator sees of one process's store calls. */
interface Wire {
  /** Set when the process is killed: from then on nothing it writes arrives. */
  dead: boolean;
  /** Store calls made (any). */
  calls: number;
  /** Commits sent and not answered yet. */
  inflight: Set<Promise<unknown>>;
  /** The takes of the current hold: the caps the store handed `decide` (undefined: a store that hands none)
   *  and whether it decided to write (a grant or a reserve). */
  takes: { caps: Caps | undefined; wrote: boolean }[];
}

/**
 * The store as one process reaches it: its commits are reported to `committed` when the store answered
 * (which is when their settlements are durable), its takes' decisions recorded in `wire.takes`, and once the
 * process is killed nothing it writes arrives.
 */
function wired(store: Store, wire: Wire, committed: (batch: CommitBatch) => void): Store {
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        wire.calls++;
        if (wire.dead) {
          if (prop === "commit") return Promise.resolve(); // the dead process's last writes are lost
          return Promise.reject(new Error(`a killed process called store.${String(prop)}`));
        }
        if (prop === "takeLease") {
          const take = args[0] as LeaseTake;
          const decide = take.decide;
          return v.call(target, {
            ...take,
            decide: (view: LeaseView, caps?: Caps) => {
              const seen = { caps: caps ? { ...caps } : undefined, wrote: false };
              wire.takes.push(seen); // before deciding: a refusal throws
              const d = (decide as (v: LeaseView, c?: Caps) => LeaseDecision)(view, caps);
              seen.wrote = d.grant > 0n || d.reserved > 0n;
              return d;
            },
          });
        }
        if (prop !== "commit") return v.apply(target, args);
        const batch = args[0] as CommitBatch;
        const sent = (v.apply(target, args) as Promise<void>).then(() => committed(batch));
        wire.inflight.add(sent);
        sent.finally(() => wire.inflight.delete(sent)).catch(() => {});
        return sent;
      };
    },
  });
}

type HoldState = "open" | "pending" | "durable" | "lost" | "orphan" | "expired";

/** One admitted request, as the model tracks it from admission to its end. */
interface Hold {
  id: string;
  proc: Proc;
  key: string;
  amount: bigint;
  /** Admission time (sim clock). */
  at: number;
  /** The caps the admitting process knew at admission. */
  caps: Caps;
  /** open → pending (settled in memory) → durable (a commit carrying it was answered); or lost (settled,
   *  its process killed before that); or orphan (open when its process was killed) → expired (its lease
   *  expired). */
  state: HoldState;
  charge: bigint;
  flushedAt: number;
}

interface Proc {
  name: string;
  holder: string;
  ledger: LeaseLedger;
  accs: Map<string, Account>;
  wire: Wire;
  /** The caps version of each key this process last read. */
  known: Map<string, number>;
  /** Per key, while this process has not read the key's caps set since: its lease then (what it may charge
   *  without a take) and the holds it admitted since without checking a cap. */
  stale: Map<string, { since: number; lease: bigint; holds: Hold[] }>;
  open: Set<Hold>;
  /** Settled, not durable yet. */
  pending: Set<Hold>;
  killedAt: number | undefined;
}

interface KeyModel {
  id: string;
  credited: bigint;
  /** Σ charges of durable settlements. */
  durable: bigint;
  caps: Caps;
  version: number;
  /** Holds admitted, and durable settlements, since the start of the current UTC day (pruned as it rolls). */
  admitted: Hold[];
  settled: Hold[];
  /** Per spend cap, the documented bound of its window from the moment it was stored (#windowBound). */
  bounds: Map<CapKind, { start: number; cap: bigint; bound: bigint; at: number }>;
}

export interface SimOptions {
  seed: number;
  steps: number;
  store: Store;
  /** The store's name in messages. */
  label: string;
  ttlMs?: number;
  idleMs?: number;
  /** Live processes at most. */
  maxProcs?: number;
  /** Probability that a hold is a liveness probe (every process flushed first, the model's rule checked). */
  probe?: number;
}

export interface SimResult {
  steps: number;
  admitted: number;
  refused: number;
  probes: number;
  probesThatMustAdmit: number;
  durable: number;
  lost: number;
  expired: number;
  kills: number;
  restarts: number;
  capChanges: number;
  hoursCrossed: number;
  daysCrossed: number;
  /** Refusals by code. */
  codes: Record<string, number>;
}

export class ModelFailure extends Error {}

/** Two keys: one with credit to spare, one that runs out now and then (top-ups bring it back). */
const INITIAL = new Map([["key_m1", 2_000_000n], ["key_m2", 300_000n]]);
const KEYS = [...INITIAL.keys()];

export class LeaseModel {
  readonly #o: Required<SimOptions>;
  readonly #rng: Rng;
  #now = Date.UTC(2026, 2, 31, 22, 41, 7); // a month's last day: hour, day and month boundaries ahead
  #step = 0;
  #procSeq = 0;
  #reqSeq = 0;
  readonly #live: Proc[] = [];
  /** Killed processes whose leases may still be live in the store. */
  readonly #killed: Proc[] = [];
  readonly #keys = new Map<string, KeyModel>();
  readonly #log: string[] = [];
  /** The views each key's last check read, and the store calls made and the clock then. */
  readonly #views = new Map<string, { calls: number; now: number; holders: Proc[]; views: LeaseView[] }>();
  /** Store writes the simulator made itself (to know when nothing changed). */
  #ownCalls = 0;
  /** The keys the current step may have changed (checked after it). */
  #dirty = new Set(KEYS);
  /** Settlements not durable yet, by request id (a commit names them by their usage rows). */
  readonly #byId = new Map<string, Hold>();
  readonly #r: SimResult = {
    steps: 0,
    admitted: 0,
    refused: 0,
    probes: 0,
    probesThatMustAdmit: 0,
    durable: 0,
    lost: 0,
    expired: 0,
    kills: 0,
    restarts: 0,
    capChanges: 0,
    hoursCrossed: 0,
    daysCrossed: 0,
    codes: {},
  };

  constructor(opts: SimOptions) {
    this.#o = { ttlMs: 30_000, idleMs: 5_000, maxProcs: 4, probe: 0.5, ...opts };
    this.#rng = new Rng(opts.seed);
  }

  get #ttl(): number {
    return this.#o.ttlMs;
  }

  /** Runs the whole simulation; throws ModelFailure with the seed, step and last operations. */
  async run(): Promise<SimResult> {
    try {
      for (const id of KEYS) {
        const credit = INITIAL.get(id)!;
        await this.#o.store.createKey(keyRecord(id, { credited: credit, balance: credit }));
        this.#keys.set(id, {
          id,
          credited: credit,
          durable: 0n,
          caps: noCaps(),
          version: 0,
          admitted: [],
          settled: [],
          bounds: new Map(),
        });
      }
      for (let i = 0; i < 3; i++) await this.#start();
      for (this.#step = 1; this.#step <= this.#o.steps; this.#step++) {
        this.#dirty = new Set(KEYS); // an operation on one key narrows it
        await this.#randomStep();
        await this.#quiet();
        await this.#check();
      }
      this.#step = this.#o.steps + 1;
      await this.#finish();
      this.#r.steps = this.#o.steps;
      return this.#r;
    } catch (err) {
      throw this.#failure(err);
    } finally {
      // Whatever happened, no ledger is left with a pending commit timer (Deno's leak sanitizer).
      for (const p of [...this.#live, ...this.#killed]) {
        p.wire.dead = true;
        await p.ledger.close().catch(() => {});
      }
    }
  }

  #failure(err: unknown): Error {
    if (err instanceof ModelFailure && err.message.startsWith("lease model")) return err;
    const what = err instanceof ModelFailure
      ? err.message
      : `unexpected error: ${err instanceof Error ? err.stack : err}`;
    return new ModelFailure(
      `lease model [${this.#o.label}] failed: seed=${this.#o.seed} step=${this.#step}` +
        ` (sim clock ${new Date(this.#now).toISOString()}): ${what}\n` +
        `replay: LEASE_MODEL_SEED=${this.#o.seed} LEASE_MODEL_STEPS=${this.#step} ` +
        `deno test -A --unstable-kv src/accounts/lease_model_test.ts (with TEST_DATABASE_URL: Postgres too)\n` +
        `last operations:\n  ${this.#log.join("\n  ")}`,
    );
  }

  #note(s: string): void {
    this.#log.push(`#${this.#step} ${s}`);
    if (this.#log.length > 20) this.#log.shift();
  }

  #fail(msg: string): never {
    throw new ModelFailure(msg);
  }

  // ---- the operations ----

  async #randomStep(): Promise<void> {
    const r = this.#rng.float();
    if (this.#live.length === 0 || (this.#live.length < 2 && r < 0.05)) return void await this.#start();
    if (r < 0.34) return await this.#hold();
    if (r < 0.62) return this.#settle();
    if (r < 0.68) return await this.#flushOne();
    if (r < 0.72) return await this.#refresh();
    if (r < 0.75) {
      // KEY_REFRESH_MS elapsed for every process (it is far shorter than LEASE_IDLE_MS).
      for (const p of this.#live) await this.#refresh(p);
      return;
    }
    if (r < 0.82) {
      return await this.#advance(
        this.#rng.chance(0.8) ? this.#rng.int(1, 3_000) : this.#rng.int(3_000, 25_000),
      );
    }
    if (r < 0.86) return await this.#setCaps();
    if (r < 0.88) return await this.#topUp();
    if (r < 0.90) return this.#giveBackIdle();
    if (r < 0.915) return await this.#expiry();
    if (r < 0.94) return await this.#jump();
    if (r < 0.955) return await this.#kill();
    if (r < 0.97) return await this.#restart();
    if (this.#live.length < this.#o.maxProcs) return void await this.#start();
    return await this.#hold();
  }

  /** A new process: a fresh holder id, the keys read from the store as at start-up. */
  async #start(): Promise<Proc> {
    const n = ++this.#procSeq;
    const wire: Wire = { dead: false, calls: 0, inflight: new Set(), takes: [] };
    const holder = `h_s${this.#o.seed}_p${n}`;
    const ledger = withoutTimers(() =>
      new LeaseLedger(wired(this.#o.store, wire, (batch) => this.#committed(batch)), {
        holder,
        ttlMs: this.#ttl,
        idleMs: this.#o.idleMs,
        // The group commit runs only when the simulator flushes (its timer never fires within the test).
        commitIntervalMs: 1e9,
        // A failed renewal is one of the faults simulated: not worth a line.
        log: new Logger("error", () => {}),
        now: () => this.#now,
      })
    );
    const p: Proc = {
      name: `p${n}`,
      holder,
      ledger,
      accs: new Map(),
      wire,
      known: new Map(),
      stale: new Map(),
      open: new Set(),
      pending: new Set(),
      killedAt: undefined,
    };
    for (const id of KEYS) {
      const rec = await this.#o.store.getKey(id);
      if (!rec) this.#fail(`store lost key ${id}`);
      p.accs.set(id, newAccount(rec, this.#now));
      p.known.set(id, this.#keys.get(id)!.version);
    }
    this.#live.push(p);
    this.#note(`start ${p.name} (${holder})`);
    return p;
  }

  #amount(): bigint {
    const r = this.#rng.float();
    if (r < 0.7) return this.#rng.big(1_000n, 20_000n);
    if (r < 0.9) return this.#rng.big(20_000n, 120_000n);
    return this.#rng.big(120_000n, 700_000n);
  }

  async #hold(): Promise<void> {
    const p = this.#rng.pick(this.#live);
    const key = this.#rng.pick(KEYS);
    const amount = this.#amount();
    const acc = p.accs.get(key)!;
    const probe = this.#rng.chance(this.#o.probe);
    if (!probe) this.#dirty = new Set([key]); // a probe flushes every process first
    let must: string | undefined;
    if (probe) {
      this.#r.probes++;
      await this.#flushAll();
      must = await this.#mustAdmit(p, key, amount);
      if (must) this.#r.probesThatMustAdmit++;
    }
    const caps = { ...acc.rec.caps };
    const heldBefore = acc.held;
    p.wire.takes = [];
    try {
      await p.ledger.hold(acc, { amount, capCodes: CODES, now: this.#now });
    } catch (err) {
      const code = err instanceof GatewayError ? err.code : undefined;
      this.#note(
        `hold ${p.name} ${key} ${amount} (caps ${fmtCaps(caps)}${probe ? ", probe" : ""}) → refused ${
          code ?? err
        }`,
      );
      this.#r.refused++;
      const name = `refused_${code ?? "other"}` as const;
      this.#r.codes[name] = (this.#r.codes[name] ?? 0) + 1;
      const capsSeen = anyCap(caps) || p.wire.takes.some((t) => t.caps && anyCap(t.caps));
      if (!code || !(CREDIT_CODES.has(code) || (capsSeen && CAP_CODES.has(code)))) {
        this.#fail(`hold refused with ${err instanceof Error ? err.stack : err}`);
      }
      if (acc.held !== heldBefore) {
        this.#fail(`a refused hold changed ${p.name}'s held ${heldBefore} → ${acc.held}`);
      }
      if (must) {
        this.#fail(`LIVENESS: ${p.name}'s hold of ${amount} on ${key} refused with ${code}, but ${must}`);
      }
      return;
    }
    // The caps the hold was checked against: those its last take that wrote decided with — as the store
    // handed them to `decide`, or, from a store that hands none, as the process knew them (a ledger that
    // checks caps only in its exact takes: none when it took a slice) —; none for a hold placed from the lease.
    const took = p.wire.takes.findLast((t) => t.wrote);
    const checkedWith = !took ? noCaps() : took.caps ?? caps;
    const direct = anyCap(checkedWith);
    const h: Hold = {
      id: `req_s${this.#o.seed}_${++this.#reqSeq}`,
      proc: p,
      key,
      amount,
      at: this.#now,
      caps: checkedWith,
      state: "open",
      charge: 0n,
      flushedAt: 0,
    };
    p.open.add(h);
    const km = this.#keys.get(key)!;
    km.admitted.push(h);
    if (anyCap(km.caps) && !anyCap(h.caps)) {
      // Not checked against the key's caps: only a process that has not read them may do that.
      if (p.known.get(key) === km.version) {
        this.#fail(`${p.name} read caps v${km.version} of ${key} and admitted ${h.id} without checking them`);
      }
      p.stale.get(key)?.holds.push(h);
    }
    this.#r.admitted++;
    this.#note(
      `hold ${p.name} ${key} ${amount} (caps ${fmtCaps(caps)}${probe ? ", probe" : ""}) → ${h.id}` +
        (direct
          ? ` exact, checked with ${fmtCaps(h.caps)}`
          : took
          ? " after a slice take"
          : " from the lease"),
    );
  }

  /**
   * Whether the model says this hold must be admitted (a reason), or may be refused (undefined). Only where
   * the answer is unambiguous: every live process flushed (the caller did), no killed holder's lease of the
   * key still live, and either the key has no cap anywhere or every live process knows its current caps.
   * Credit: the store's free credit (credited − spent − every live lease; another process's unused lease may
   * stand in the way, docs/ledger_leases.md "Limits"). Caps: the spend caps against the window's spend plus
   * the real open holds, the reserve caps against the window's reserve (the store's sum or the holds
   * admitted in the window, whichever is more) — the rule one process applies (caps.ts).
   */
  async #mustAdmit(p: Proc, key: string, amount: bigint): Promise<string | undefined> {
    const km = this.#keys.get(key)!;
    const acc = p.accs.get(key)!;
    const capped = anyCap(km.caps);
    if (capped) {
      if (this.#live.some((q) => q.known.get(key) !== km.version)) return undefined;
    } else if (anyCap(acc.rec.caps)) return undefined;
    for (const k of this.#killed) {
      if ((await this.#view(key, k.holder)).mine > 0n) return undefined;
    }
    const v = await this.#view(key, "h_model");
    const free = v.credited - v.spent - v.leased;
    if (amount > free) return undefined;
    let why = `the store's free credit is ${free}`;
    if (!capped) return why;
    const open = sum(
      this.#live.flatMap((q) => [...q.open].filter((h) => h.key === key).map((h) => h.amount)),
    );
    for (const kind of KINDS) {
      const cap = km.caps[kind];
      if (cap === null) continue;
      const start = isHourly(kind) ? hourOf(this.#now) : dayOf(this.#now);
      let used: bigint;
      if (isSpend(kind)) {
        used = (isHourly(kind) ? v.window.hourSpent : v.window.daySpent) + open;
      } else {
        const stored = isHourly(kind) ? v.window.hourReserved : v.window.dayReserved;
        used = max(stored, sum(km.admitted.filter((h) => h.at >= start).map((h) => h.amount)));
      }
      if (used + amount > cap) return undefined;
      why += `; ${kind} ${cap}: used ${used}${isSpend(kind) ? ` (open holds ${open})` : ""}, room ${
        cap - used
      }`;
    }
    return `${why}; every live process knows caps v${km.version} (${fmtCaps(km.caps)})`;
  }

  #settle(): void {
    const open = this.#live.flatMap((p) => [...p.open]);
    if (open.length === 0) return;
    const h = this.#rng.pick(open);
    this.#dirty = new Set([h.key]);
    this.#settleHold(h);
  }

  /** Settles an open hold with a charge below, at or above it (up to the ceiling billing uses:
   *  src/billing/ledger.ts, the hold plus Ledger.spareCredit). */
  #settleHold(h: Hold): void {
    const p = h.proc;
    const acc = p.accs.get(h.key)!;
    const spare = p.ledger.spareCredit(acc);
    const r = this.#rng.float();
    let charge: bigint;
    if (r < 0.1) charge = 0n;
    else if (r < 0.25) charge = h.amount;
    else if (r < 0.85) charge = this.#rng.big(0n, h.amount);
    else charge = h.amount + (spare > 0n ? this.#rng.big(0n, min(spare, 2n * h.amount)) : 0n);
    const row: UsageRow = usageRow(h.id, h.key, {
      charged: charge,
      reserved: h.amount,
      createdAt: this.#now,
    });
    p.ledger.settle(acc, h.amount, charge, row);
    p.open.delete(h);
    h.state = "pending";
    h.charge = charge;
    p.pending.add(h);
    this.#byId.set(h.id, h);
    this.#note(`settle ${p.name} ${h.id} hold ${h.amount} charge ${charge} (spare ${spare})`);
  }

  async #flushOne(): Promise<void> {
    const p = this.#rng.pick(this.#live);
    await this.#flush(p);
    this.#note(`flush ${p.name}`);
    // Flushed: the process's lease of each key is the store's.
    for (const [key, acc] of p.accs) {
      const mine = (await this.#view(key, p.holder)).mine;
      const own = p.ledger.leased(acc);
      if (mine !== own) {
        this.#fail(`after a flush, ${p.name}'s lease of ${key} is ${own}, the store's ${mine}`);
      }
    }
  }

  async #flush(p: Proc): Promise<void> {
    await p.ledger.flush();
    await this.#quiet();
  }

  /** A commit the store answered: its settlements are durable, in the windows of its `at`. */
  #committed(batch: CommitBatch): void {
    for (const row of batch.usage) {
      const h = this.#byId.get(row.requestId);
      if (!h || h.state !== "pending") {
        this.#fail(`a commit carried ${row.requestId}, not a pending settlement`);
      }
      h.state = "durable";
      h.flushedAt = batch.at ?? this.#now;
      h.proc.pending.delete(h);
      this.#byId.delete(h.id);
      const km = this.#keys.get(h.key)!;
      km.durable += h.charge;
      km.settled.push(h);
      this.#everyDurable.push(h);
      this.#r.durable++;
    }
  }

  /** Waits until no process has a commit in flight (a ledger may flush by itself: a give-back it waits for). */
  async #quiet(): Promise<void> {
    let waited = false;
    for (let round = 0; round < 100; round++) {
      const inflight = [...this.#live, ...this.#killed].flatMap((p) => [...p.wire.inflight]);
      if (inflight.length === 0) {
        if (!waited) return;
        // A commit answered may have left a round to start (its ROUND_GAP_MS timer): let it.
        await new Promise((r) => setTimeout(r, Number(Deno.env.get("LM_WAIT") ?? 6)));
        waited = false;
        continue;
      }
      waited = true;
      await Promise.allSettled(inflight);
    }
    this.#fail("commits still in flight after 100 rounds");
  }

  async #flushAll(): Promise<void> {
    for (const p of this.#live) await this.#flush(p);
  }

  /** A process reads its keys' records (KEY_REFRESH_MS elapsed for it: key_refresh.ts, Accounts#learn). */
  async #refresh(p = this.#rng.pick(this.#live)): Promise<void> {
    for (const [key, acc] of p.accs) {
      const rec = await this.#o.store.getKey(key);
      if (!rec) this.#fail(`store lost key ${key}`);
      learn(p, acc, rec);
      p.known.set(key, this.#keys.get(key)!.version);
      p.stale.delete(key);
    }
    this.#note(`refresh ${p.name}`);
  }

  /** Caps set, changed or lifted through a process, as the admin API does (Accounts.update). */
  async #setCaps(): Promise<void> {
    const p = this.#rng.pick(this.#live);
    const key = this.#rng.pick(KEYS);
    const km = this.#keys.get(key)!;
    const acc = p.accs.get(key)!;
    const stored = await this.#o.store.getKey(key);
    learn(p, acc, stored!);
    await this.#quiet(); // what learning it started
    const caps = { ...acc.rec.caps };
    // Lifted, or some caps changed: spend caps more often (their check counts every open hold), a reserve
    // cap seldom (it fills with every hold of the window, settled or not).
    const lift = this.#rng.chance(0.25);
    for (const kind of KINDS) {
      if (lift) caps[kind] = null;
      else if (this.#rng.chance(isSpend(kind) ? 0.6 : 0.25)) {
        caps[kind] = this.#rng.chance(0.2)
          ? null
          : isHourly(kind)
          ? this.#rng.big(40_000n, 500_000n)
          : this.#rng.big(150_000n, 2_000_000n);
      }
    }
    acc.rec.caps = caps;
    this.#ownCalls++;
    await this.#o.store.updateKey(acc.rec);
    await this.#windowBound(km, p, caps);
    keyChanged(p, acc);
    km.caps = { ...caps };
    km.version++;
    p.known.set(key, km.version);
    for (const q of this.#live) {
      if (q === p) continue;
      if (anyCap(caps)) {
        q.stale.set(key, { since: this.#now, lease: q.ledger.leased(q.accs.get(key)!), holds: [] });
      } else q.stale.delete(key);
    }
    this.#r.capChanges++;
    this.#note(`caps ${key} through ${p.name} → v${km.version} ${fmtCaps(caps)}`);
  }

  /** An operator top-up through a process (Accounts.topUp): the store's atomic credit, then its view. */
  async #topUp(): Promise<void> {
    const p = this.#rng.pick(this.#live);
    const key = this.#rng.pick(KEYS);
    const amount = this.#rng.big(20_000n, 600_000n);
    this.#ownCalls++;
    if (!await this.#o.store.creditKey(ledgerEntry(key, "credit", amount, "admin:topup", this.#now))) {
      this.#fail(`top-up of ${key} refused`);
    }
    p.ledger.applyCredit(p.accs.get(key)!, amount);
    this.#keys.get(key)!.credited += amount;
    this.#note(`top-up ${key} ${amount} through ${p.name}`);
  }

  #giveBackIdle(): void {
    const p = this.#rng.pick(this.#live);
    p.ledger.giveBackIdle();
    this.#note(`idle give-back ${p.name}`);
  }

  /**
   * Moves the clock by `ms`, in steps shorter than a third of the lease TTL, doing at each what the live
   * processes' timers would: the group commit (flushed), lease renewal, idle give-back.
   */
  async #advance(ms: number, why = "advance"): Promise<void> {
    const before = this.#now;
    const chunk = Math.floor(this.#ttl / 3) - 1;
    for (let left = ms; left > 0; left -= chunk) {
      await this.#flushAll();
      this.#now += Math.min(left, chunk);
      for (const p of this.#live) {
        await p.ledger.renew();
        p.ledger.giveBackIdle();
      }
    }
    this.#crossed(before);
    this.#note(`${why} ${ms} ms → ${new Date(this.#now).toISOString()}`);
  }

  #crossed(before: number): void {
    if (hourOf(before) !== hourOf(this.#now)) this.#r.hoursCrossed++;
    if (dayOf(before) !== dayOf(this.#now)) {
      this.#r.daysCrossed++;
      for (const km of this.#keys.values()) {
        const day = dayOf(this.#now);
        km.admitted = km.admitted.filter((h) => h.at >= day);
        km.settled = km.settled.filter((h) => h.flushedAt >= day);
      }
    }
  }

  /** Past LEASE_TTL_MS: live leases are renewed on the way, a killed process's leases expire. */
  async #expiry(): Promise<void> {
    await this.#advance(this.#ttl + this.#rng.int(1, 5_000), "lease expiry: advance");
  }

  /**
   * To just before the next UTC hour (or day) boundary. Only while no live process has an open hold: the
   * jump stands for a quiet stretch, in which every process gave its idle leases back (LEASE_IDLE_MS) and
   * killed processes' leases expired.
   */
  async #jump(): Promise<void> {
    if (this.#live.some((p) => p.open.size > 0)) return await this.#advance(this.#rng.int(1, 2_000));
    for (const p of this.#live) p.ledger.giveBackIdle(true);
    await this.#flushAll();
    const day = this.#rng.chance(0.3);
    const target = (day ? dayOf(this.#now) + DAY : hourOf(this.#now) + HOUR) - this.#rng.int(500, 45_000);
    if (target <= this.#now + this.#ttl) return await this.#advance(this.#rng.int(1, 2_000));
    const before = this.#now;
    this.#now = target;
    this.#crossed(before);
    this.#note(
      `jump (quiet) to ${new Date(this.#now).toISOString()}, before the next ${day ? "day" : "hour"}`,
    );
  }

  /** A process killed: its timers gone, its holds never settled, its unflushed settlements lost. */
  async #kill(): Promise<void> {
    if (this.#live.length < 2) return;
    const p = this.#rng.pick(this.#live);
    this.#live.splice(this.#live.indexOf(p), 1);
    for (const h of p.pending) {
      h.state = "lost";
      this.#byId.delete(h.id);
      this.#r.lost++;
    }
    p.pending.clear();
    for (const h of p.open) h.state = "orphan";
    p.killedAt = this.#now;
    p.wire.dead = true;
    await p.ledger.close(); // through the cut store: clears its timers, writes nothing
    this.#killed.push(p);
    this.#r.kills++;
    this.#note(`kill ${p.name} with ${p.open.size} holds open`);
  }

  /** A process restarted: it drains (its requests settle), closes (leases given back), and a new one starts. */
  async #restart(): Promise<void> {
    const p = this.#rng.pick(this.#live);
    await this.#stop(p);
    this.#r.restarts++;
    this.#note(`stopped ${p.name} for a restart`);
    await this.#start();
  }

  async #stop(p: Proc): Promise<void> {
    for (const h of [...p.open]) this.#settleHold(h);
    await p.ledger.drain();
    await p.ledger.close();
    await this.#quiet();
    if (p.pending.size > 0) this.#fail(`${p.name} closed with ${p.pending.size} settlements not durable`);
    this.#live.splice(this.#live.indexOf(p), 1);
  }

  // ---- the invariants ----

  #view(key: string, holder: string): Promise<LeaseView> {
    return this.#o.store.leaseView(key, holder, this.#now).then((v) => v ?? this.#fail(`no view of ${key}`));
  }

  async #check(): Promise<void> {
    for (const km of this.#keys.values()) if (this.#dirty.has(km.id)) await this.#checkKey(km);
    // A killed process is forgotten once its leases are past their expiry and checked gone.
    for (const k of [...this.#killed]) {
      if (this.#now >= k.killedAt! + this.#ttl) {
        for (const key of KEYS) {
          if ((await this.#view(key, k.holder)).mine !== 0n) {
            this.#fail(`${k.name}, killed at ${k.killedAt}, still has a lease of ${key} past LEASE_TTL_MS`);
          }
        }
        for (const h of k.open) this.#expire(h);
        this.#killed.splice(this.#killed.indexOf(k), 1);
      }
    }
  }

  #expire(h: Hold): void {
    if (h.state !== "orphan") return;
    h.state = "expired";
    h.proc.open.delete(h);
    this.#r.expired++;
  }

  /**
   * One key after a step: the store's credited and spent are the model's (spent = Σ charges of the durable
   * settlements, each once); balance and free credit (credited − spent − every live lease) ≥ 0; Σ of the
   * known holders' leases = the store's leased, each live process's lease ≥ its open holds + its charges not
   * committed, a killed one's ≥ its holds until it expires (then they no longer count); the windows' spend =
   * the durable charges in them; and the caps (#checkCaps, #checkStale, #checkWindowBound).
   */
  async #checkKey(km: KeyModel): Promise<void> {
    const key = km.id;
    // One view per holder (each also carries the key's money and windows), read at once; the last ones
    // again when the step reached no store at all (a settlement, a hold from the lease).
    const holders = [...this.#live, ...this.#killed];
    const calls = holders.reduce((n, p) => n + p.wire.calls, this.#ownCalls);
    const last = this.#views.get(key);
    const fresh = last && last.calls === calls && last.now === this.#now &&
      last.holders.length === holders.length && last.holders.every((p, i) => p === holders[i]);
    const views = fresh ? last.views : await Promise.all(
      (holders.length > 0 ? holders : [undefined]).map((p) => this.#view(key, p?.holder ?? "h_model")),
    );
    this.#views.set(key, { calls, now: this.#now, holders, views });
    const v = views[0]!;
    const mineOf = (p: Proc) => views[holders.indexOf(p)]!.mine;
    // credited = free + Σ leases + spent, each known exactly.
    if (v.credited !== km.credited) this.#fail(`${key}: credited ${v.credited}, the model's ${km.credited}`);
    if (v.spent !== km.durable) {
      this.#fail(`${key}: spent ${v.spent}, Σ charges of durable settlements ${km.durable}`);
    }
    if (v.credited - v.spent < 0n) this.#fail(`${key}: balance below zero: ${v.credited - v.spent}`);
    if (v.credited - v.spent - v.leased < 0n) {
      this.#fail(`${key}: free credit below zero: ${v.credited} − ${v.spent} − leased ${v.leased}`);
    }
    let leases = 0n;
    for (const p of this.#live) {
      const mine = mineOf(p);
      leases += mine;
      const acc = p.accs.get(key)!;
      const held = sum([...p.open].filter((h) => h.key === key).map((h) => h.amount));
      if (acc.held !== held) {
        this.#fail(`${p.name} holds ${acc.held} of ${key}, the model's open holds ${held}`);
      }
      const pending = sum([...p.pending].filter((h) => h.key === key).map((h) => h.charge));
      if (mine < held + pending) {
        this.#fail(
          `${p.name}'s lease of ${key} is ${mine}, below its open holds ${held} + unflushed charges ${pending}`,
        );
      }
    }
    for (const k of this.#killed) {
      const mine = mineOf(k);
      leases += mine;
      const orphans = [...k.open].filter((h) => h.key === key);
      if (mine === 0n) orphans.forEach((h) => this.#expire(h));
      else if (mine < sum(orphans.map((h) => h.amount))) {
        this.#fail(`killed ${k.name}'s lease of ${key} is ${mine}, below its holds still open`);
      }
    }
    if (leases !== v.leased) {
      this.#fail(`${key}: Σ leases of the known holders ${leases}, the store's leased ${v.leased}`);
    }
    // The shared windows' spend is the durable charges in the window, exactly.
    const hour = hourOf(this.#now), day = dayOf(this.#now);
    const inHour = sum(km.settled.filter((h) => h.flushedAt >= hour).map((h) => h.charge));
    const inDay = sum(km.settled.filter((h) => h.flushedAt >= day).map((h) => h.charge));
    if (v.window.hourSpent !== inHour || v.window.daySpent !== inDay) {
      this.#fail(
        `${key}: window spend hour ${v.window.hourSpent} / day ${v.window.daySpent}, the durable charges ` +
          `${inHour} / ${inDay}`,
      );
    }
    this.#checkCaps(km);
    this.#checkStale(km);
    this.#checkWindowBound(km, v);
  }

  /**
   * No cap window above its cap. For each cap now set, over the holds checked against it — admitted by an
   * exact take under a cap of that kind at or below it —: a reserve cap bounds their reserves admitted in the
   * window; a spend cap bounds their charges made durable in the window, each up to its hold, plus their holds
   * still open (settled or not, until durable or their lease expired), as one process counts them (caps.ts).
   * What a window may hold beyond: holds admitted by a process that did not know the cap (placed from its
   * lease: the KEY_REFRESH_MS window, docs/ledger_leases.md), and a charge's part above its hold (the
   * settlement ceiling is the hold plus the lease's free part, not the cap).
   */
  #checkCaps(km: KeyModel): void {
    const inFlight = [...this.#live, ...this.#killed].flatMap((p) => [...p.open, ...p.pending])
      .filter((h) =>
        h.key === km.id && (h.state === "open" || h.state === "orphan" || h.state === "pending")
      );
    for (const kind of KINDS) {
      const cap = km.caps[kind];
      if (cap === null) continue;
      const start = isHourly(kind) ? hourOf(this.#now) : dayOf(this.#now);
      const checked = (h: Hold) => h.caps[kind] !== null && h.caps[kind]! <= cap;
      const upToHold = (h: Hold) =>
        h.state === "pending" || h.state === "durable" ? min(h.charge, h.amount) : h.amount;
      let used: bigint, open = 0n;
      if (isSpend(kind)) {
        used = sum(km.settled.filter((h) => h.flushedAt >= start && checked(h)).map(upToHold));
        open = sum(inFlight.filter(checked).map(upToHold));
      } else {
        used = sum(km.admitted.filter((h) => h.at >= start && checked(h)).map((h) => h.amount));
      }
      if (used + open > cap) {
        this.#fail(
          `${km.id}: ${kind} window from ${new Date(start).toISOString()} at ${used}` +
            (isSpend(kind) ? ` + open ${open}` : "") + `, above its cap ${cap}`,
        );
      }
    }
  }

  /**
   * docs/ledger_leases.md "Caps across processes", the window: once a spend cap is stored (t0), the key's
   * spend in the cap's window is at most max(cap, S(t0) + Σ_p L_p), S(t0) the window's spend then and L_p
   * the store lease of each process that has not read the cap. The processes that have (here: the one that
   * set it) add what they held open then — their open holds and their settlements not yet committed —, as on
   * one process, where holds admitted before a cap are charged whatever it says.
   */
  async #windowBound(km: KeyModel, setter: Proc, caps: Caps): Promise<void> {
    const v = await this.#view(km.id, "h_model");
    let leased = 0n;
    for (const q of this.#live) {
      if (q === setter) continue;
      leased += (await this.#view(km.id, q.holder)).mine;
    }
    const own = sum([...setter.open, ...setter.pending].filter((h) => h.key === km.id).map((h) => h.amount));
    for (const kind of KINDS) {
      if (!isSpend(kind)) continue;
      const cap = caps[kind];
      if (cap === null) {
        km.bounds.delete(kind);
        continue;
      }
      const start = isHourly(kind) ? hourOf(this.#now) : dayOf(this.#now);
      const spent = isHourly(kind) ? v.window.hourSpent : v.window.daySpent;
      km.bounds.set(kind, { start, cap, bound: max(cap, spent + leased + own), at: this.#now });
    }
  }

  #checkWindowBound(km: KeyModel, v: LeaseView): void {
    for (const [kind, b] of km.bounds) {
      const start = isHourly(kind) ? hourOf(this.#now) : dayOf(this.#now);
      if (start !== b.start || km.caps[kind] !== b.cap) continue;
      const spent = isHourly(kind) ? v.window.hourSpent : v.window.daySpent;
      if (spent > b.bound) {
        this.#fail(
          `${km.id}: ${kind} ${b.cap} set at ${
            new Date(b.at).toISOString()
          }: the window's spend ${spent} is ` +
            `above the documented bound ${b.bound}`,
        );
      }
    }
  }

  /**
   * The window between a cap set and a process reading it (KEY_REFRESH_MS): what that process admits
   * without checking the cap comes from its lease as it was when the cap was set — no new credit from the
   * store for it — so their charges (their holds, while open) are at most that lease, process by process.
   */
  #checkStale(km: KeyModel): void {
    for (const p of [...this.#live, ...this.#killed]) {
      const stale = p.stale.get(km.id);
      if (!stale) continue;
      const used = sum(
        stale.holds.map((h) => h.state === "open" || h.state === "orphan" ? h.amount : h.charge),
      );
      if (used > stale.lease) {
        this.#fail(
          `${p.name}, not having read ${km.id}'s caps set at ${new Date(stale.since).toISOString()}, ` +
            `admitted holds unchecked charging ${used}, beyond its lease then ${stale.lease}`,
        );
      }
    }
  }

  /** The end: every live process drains and closes; then every settled request is in the store once. */
  async #finish(): Promise<void> {
    for (const p of [...this.#live]) await this.#stop(p);
    this.#note("every live process drained and closed");
    await this.#check();
    this.#now += this.#ttl + 1;
    await this.#check();
    for (const km of this.#keys.values()) {
      const v = await this.#view(km.id, "h_model");
      if (v.leased !== 0n) this.#fail(`${km.id}: leased ${v.leased} after every process ended`);
      const rows = await this.#rows(km.id);
      const durable = this.#allDurable(km.id);
      const seen = new Map<string, bigint>();
      for (const row of rows) {
        if (seen.has(row.requestId)) this.#fail(`usage row ${row.requestId} written twice`);
        seen.set(row.requestId, row.charged);
      }
      for (const h of durable) {
        const charged = seen.get(h.id);
        if (charged === undefined) this.#fail(`settled request ${h.id} has no usage row`);
        if (charged !== h.charge) this.#fail(`usage row ${h.id} charged ${charged}, settled ${h.charge}`);
        seen.delete(h.id);
      }
      if (seen.size > 0) {
        this.#fail(`usage rows of requests never durably settled: ${[...seen.keys()].slice(0, 5)}`);
      }
      const rowSum = sum(rows.map((r) => r.charged));
      if (rowSum !== v.spent) this.#fail(`${km.id}: Σ usage rows ${rowSum}, spent ${v.spent}`);
    }
  }

  readonly #everyDurable: Hold[] = [];
  #allDurable(key: string): Hold[] {
    return this.#everyDurable.filter((h) => h.key === key);
  }

  async #rows(key: string): Promise<UsageRow[]> {
    const rows: UsageRow[] = [];
    let after: string | undefined;
    do {
      const page = await this.#o.store.listUsage(key, after ? { limit: 500, after } : { limit: 500 });
      rows.push(...page.rows);
      after = page.next;
    } while (after);
    return rows;
  }
}

/** What Accounts#learn does with a record another process wrote: the metadata, not the money; then the
 *  ledger hears of it. */
function learn(p: Proc, acc: Account, rec: KeyRecord): void {
  const { balance, credited, spent } = acc.rec;
  Object.assign(acc.rec, rec, { balance, credited, spent });
  keyChanged(p, acc);
}

/** Accounts tells the ledger a key's record changed, where the ledger has the hook (`LeaseLedger.keyChanged`;
 *  a ledger without it reads the record at each hold). */
function keyChanged(p: Proc, acc: Account): void {
  (p.ledger as { keyChanged?: (acc: Account) => void }).keyChanged?.(acc);
}
