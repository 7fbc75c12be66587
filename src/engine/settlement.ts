/**
 * The one owner of a request's hold, from the reserve to its settlement (spec §8.1 p.2–4): the hold settles
 * exactly once on every path, by construction rather than by a call at each exit. Whoever learns the outcome
 * settles through the guard — a JSON answer, the run deadline's rule, a stream's end — and the first
 * settlement counts. The place that reserved (generate.ts) closes the guard in a `finally`: a path that
 * reached no outcome failed before any answer and is released free; a stream whose 200 went out is its
 * pipeline's to settle when it ends.
 */
import type { Reservation, SettleInput } from "../billing/ledger.ts";
import { freeSettlement } from "./settle.ts";

/** A stream pipeline before its 200 went out: the guard ends it if the exchange fails (StreamPipeline). */
export interface PendingStream {
  abandon(): void;
}

export class Settlement {
  readonly reservation: Reservation;
  /** The client: gone while the exchange waited on the upstream, it cancelled the request. */
  readonly #client: { readonly aborted: boolean };
  /**
   * Whether the exchange waits on the upstream — from the hold through the family's dispatch to an upstream
   * call's head (forward.ts clears it when a head arrives). A failure then, with the client gone, settles
   * `cancelled`; a failure after a head is the upstream's, `error`.
   */
  waiting = true;
  #settled = false;
  #stream: PendingStream | undefined;

  constructor(reservation: Reservation, client: { readonly aborted: boolean }) {
    this.reservation = reservation;
    this.#client = client;
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** Settles the hold with `s` unless it is settled already; whether this call settled it. */
  settle(s: SettleInput): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.reservation.settle(s);
    return true;
  }

  /** No answer reached the client: the hold is released and nothing charged (status: see `waiting`). */
  fail(): boolean {
    if (this.#settled) return false;
    return this.settle(freeSettlement(this.waiting && this.#client.aborted));
  }

  /**
   * The exchange's stream pipeline exists: it settles when the stream ends (it may end before the 200 goes
   * out: a refusal, a deadline). Until the 200 goes out the guard still owns the hold (`close`).
   */
  streaming(stream: PendingStream): void {
    this.#stream = stream;
  }

  /**
   * The owner's `finally`, on every path. `answered`: the exchange returned its answer — a stream's hold is
   * then its pipeline's, a JSON answer settled before it returned. Otherwise the exchange failed: the hold is
   * released free unless an outcome settled it already, and a stream whose 200 never went out is ended (its
   * own end then finds the hold settled).
   */
  close(answered: boolean): void {
    const stream = this.#stream;
    this.#stream = undefined;
    if (answered && stream) return; // the stream went out: its pipeline settles when it ends
    this.fail();
    stream?.abandon();
  }
}
