/**
 * Group commit: settlements mutate memory at once and become durable together in one atomic store
 * commit, as money deltas (per key, the spend and credit added since the last round) and usage rows. A round
 * starts `intervalMs` after the first pending change, or, when changes queued up behind the previous commit,
 * as that commit returns but not sooner than ROUND_GAP_MS after it started — never a timer wait on top of a
 * slow commit. So the lag from a settlement to its durability is at most: the longer of the interval and
 * ROUND_GAP_MS + the commit in flight + its own commit (+ event loop delay), far within the durability window
 * (SETTLE_DURABILITY_MS). The lag is measured on every round (`stats()`, `GET /admin/ledger`,
 * `deno task bench`). `flush()` starts a round at once: a reader of the store waits for no timer.
 * A kill -9 loses at most the settlements inside that lag — charges the user then does not pay (never a
 * double charge). In drain mode (SIGTERM) every change commits at once, without the interval, and every
 * `checkpointMs` the rows that open streams would settle with if cut now are written as checkpoints, so a
 * SIGKILL during the drain leaves them to be settled at the next start instead of lost.
 * A failed round is committed again before anything newer: the same batch, unchanged, under the same id, so a
 * store that applied part of it (KV: some of its atomics) or all of it (Postgres: a lost reply) applies the
 * rest once (src/store/batch_id.ts) — never a double charge. Changes queued meanwhile wait for the next round.
 */
import type { LedgerStore } from "../store/store.ts";
import type { CommitBatch, LeaseDelta, MoneyDelta, UsageRow } from "../store/types.ts";
import { idGenerator } from "../util/ids.ts";
import type { Logger } from "../util/log.ts";

export interface CommitStats {
  commits: number;
  failures: number;
  /** Oldest pending change → durable, in ms: the last round's and the largest seen. */
  lastLagMs: number;
  maxLagMs: number;
  /** Summed over the rounds, for the mean (`GET /metrics`). */
  lagMsSum: number;
  /** Usage rows made durable (summed over the rounds), and the most in one round: the batch sizes. */
  rows: number;
  maxRows: number;
  /** Age of the oldest change not durable yet, ms (0: none): what a kill -9 now would lose (`/readyz`). */
  pendingMs: number;
}

/** A failed commit is retried after this long at least, so a broken store is not hammered. */
const RETRY_MS = 50;
/**
 * Under load, rounds start at most this often (in drain mode at once), so each carries more rows: a round
 * has a cost of its own — on a KV file its transaction (≈0.3 ms of SQLite's thread), its batch marker, the
 * hourly sums — that rounds every 5 ms paid for every 30-odd rows at 6,000–7,000 requests/s. On a KV file
 * 30 rows a round cost 27 µs of CPU per row, 150 rows 16 µs (bench/commit_cost.ts; docs/performance.md
 * "The group commit's rounds").
 */
const ROUND_GAP_MS = 25;

/** Batch ids (CommitBatch.id): a random stem per generator and a counter (util/ids.ts), so ids of batches of
 *  every process and every start differ. */
export function batchIds(): () => string {
  const next = idGenerator();
  return () => next("cb_");
}

/** A round's batch, and what its commit makes durable. */
interface Round {
  batch: CommitBatch;
  /** `#queued` when it was cut: every change up to it is in this batch or an earlier one. */
  upto: number;
  /** When its oldest change was queued. */
  since: number;
}

export class GroupCommitter {
  /** Money moved per key since the last round (summed: a delta, never a whole record). */
  #money = new Map<string, MoneyDelta>();
  #usage: UsageRow[] = [];
  /** When the oldest pending change was queued (undefined: nothing pending). */
  #pendingSince: number | undefined;
  /** Changes queued so far, and how many of them are durable. */
  #queued = 0;
  #durable = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The round whose commit failed, committed again (unchanged) before any other. */
  #retry: Round | undefined;
  #inflight: Promise<boolean> | undefined;
  /** When the oldest change of the round in flight was queued. */
  #inflightSince: number | undefined;
  #intervalMs: number;
  /** Drain mode: the checkpoint rows of the requests still open, and the ticker that writes them. */
  #checkpoints: (() => UsageRow[]) | undefined;
  #checkpointTicker: ReturnType<typeof setInterval> | undefined;
  /** Requests with a checkpoint in the store, and those settled since whose checkpoint must go. */
  #checkpointed = new Set<string>();
  #closed: string[] = [];
  #stats: CommitStats = {
    commits: 0,
    failures: 0,
    lastLagMs: 0,
    maxLagMs: 0,
    lagMsSum: 0,
    rows: 0,
    maxRows: 0,
    pendingMs: 0,
  };

  constructor(
    private readonly store: LedgerStore,
    intervalMs: number,
    private readonly log: Logger,
    private readonly now = () => performance.now(),
    /** Wall clock (Unix ms) a lease ledger's shared windows are rolled to (CommitBatch.at). */
    private readonly clock = () => Date.now(),
    private readonly batchId = batchIds(),
  ) {
    this.#intervalMs = intervalMs;
  }

  /** Queue money moved on a key: `spent` charged, `credited` topped up, and with a lease ledger what moves
   *  its lease (summed into what is pending for the key). */
  money(keyId: string, spent: bigint, credited: bigint, lease?: LeaseDelta): void {
    this.#add(lease ? { keyId, spent, credited, lease } : { keyId, spent, credited });
    this.#queue();
  }

  usage(row: UsageRow): void {
    this.#usage.push(row);
    this.#queue();
  }

  get failures(): number {
    return this.#stats.failures;
  }

  stats(): CommitStats {
    const oldest = this.#inflightSince ?? this.#retry?.since ?? this.#pendingSince;
    return { ...this.#stats, pendingMs: oldest === undefined ? 0 : this.now() - oldest };
  }

  /**
   * A request settled: its checkpoint, if one was written, is deleted with its balance change. Checkpoints exist
   * only while draining: the set is not asked otherwise (a lookup hashes the request id: ≈1.5 µs per request in
   * the JSON profile).
   */
  settled(requestId: string): void {
    if (this.#checkpointed.size > 0 && this.#checkpointed.delete(requestId)) this.#closed.push(requestId);
  }

  /**
   * Shutdown: commit what is pending now, from here on every change as soon as it happens, and every
   * `checkpointMs` the checkpoints of the requests still open.
   */
  drain(checkpoints?: () => UsageRow[], checkpointMs = 100): Promise<void> {
    this.#intervalMs = 0;
    if (checkpoints && !this.#checkpointTicker) {
      this.#checkpoints = checkpoints;
      this.#checkpointTicker = setInterval(() => {
        if (this.#checkpoints!().length === 0) return;
        this.#queue(); // a round with nothing else pending still writes the checkpoints
      }, checkpointMs);
    }
    return this.flush();
  }

  /** Stops the checkpoint ticker (after the drain, once no stream is open). */
  stop(): void {
    clearInterval(this.#checkpointTicker);
    this.#checkpointTicker = undefined;
  }

  /** Resolves when every change queued before the call is durable, or when a commit of it failed. */
  async flush(): Promise<void> {
    const target = this.#queued;
    while (this.#durable < target) {
      if (!this.#inflight) this.#startRound();
      if (!await this.#inflight) return;
    }
  }

  #add(d: MoneyDelta): void {
    const m = this.#money.get(d.keyId);
    if (!m) {
      this.#money.set(d.keyId, d.lease ? { ...d, lease: { ...d.lease } } : { ...d });
      return;
    }
    m.spent += d.spent;
    m.credited += d.credited;
    if (!d.lease) return;
    if (!m.lease) m.lease = { ...d.lease };
    else {
      m.lease.returned += d.lease.returned;
      m.lease.reserved += d.lease.reserved;
    }
  }

  #queue(): void {
    this.#queued++;
    this.#pendingSince ??= this.now();
    if (this.#inflight || this.#timer !== undefined) return; // the next round picks it up
    this.#timer = setTimeout(() => this.#startRound(), this.#intervalMs);
  }

  #startRound(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#inflight || (this.#retry === undefined && this.#pendingSince === undefined)) return;
    this.#inflight = this.#round();
  }

  /** A new round of everything pending (and of the checkpoints of the requests open, when draining). */
  #cut(): Round {
    const open = this.#checkpoints?.() ?? [];
    for (const row of open) this.#checkpointed.add(row.requestId);
    const batch = {
      id: this.batchId(),
      money: [...this.#money.values()],
      usage: this.#usage,
      open,
      closed: this.#closed,
      at: this.clock(),
    };
    const round = { batch, upto: this.#queued, since: this.#pendingSince! };
    this.#money = new Map();
    this.#usage = [];
    this.#closed = [];
    this.#pendingSince = undefined;
    return round;
  }

  async #round(): Promise<boolean> {
    const round = this.#retry ?? this.#cut();
    this.#retry = undefined;
    const { batch, since } = round;
    const startedAt = this.now();
    this.#inflightSince = since;
    try {
      await this.store.commit(batch);
    } catch (err) {
      this.#inflight = undefined;
      this.#inflightSince = undefined;
      // Keep the data, as it is: merged with newer changes it would be another batch, and what the store
      // applied of this one would be applied again.
      this.#retry = round;
      this.#stats.failures++;
      this.log.error("group commit failed, retried unchanged", {
        batch_id: batch.id,
        keys: batch.money.length,
        rows: batch.usage.length,
        error: String(err),
      });
      this.#timer = setTimeout(() => this.#startRound(), Math.max(this.#intervalMs, RETRY_MS));
      return false;
    }
    // Cleared in the same synchronous step as the check below, so a change queued now is never left
    // without a round (a `finally` would clear it a microtask later, after a change had been told to wait).
    this.#inflight = undefined;
    this.#inflightSince = undefined;
    this.#durable = round.upto;
    const lag = this.now() - since;
    this.#stats.commits++;
    this.#stats.lastLagMs = lag;
    if (lag > this.#stats.maxLagMs) this.#stats.maxLagMs = lag;
    this.#stats.lagMsSum += lag;
    this.#stats.rows += batch.usage.length;
    if (batch.usage.length > this.#stats.maxRows) this.#stats.maxRows = batch.usage.length;
    // Changes that queued behind this commit go now, or ROUND_GAP_MS after it started (draining: now) — not
    // after another interval.
    if (this.#pendingSince !== undefined) {
      const gap = (this.#intervalMs === 0 ? 0 : ROUND_GAP_MS) - (this.now() - startedAt);
      this.#timer = setTimeout(() => this.#startRound(), Math.max(0, gap));
    }
    return true;
  }
}
