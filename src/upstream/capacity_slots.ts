/**
 * Capacity slots (spec §7.3, docs/api.md "Errors"): a bound on this process's in-flight upstream generation
 * requests. Of `max` slots, `reserved` = ceil(max × share) are kept for priority requests: a standard request
 * is admitted only while fewer than max − reserved are busy, a priority request while any slot is free, so the
 * reserved slots are always there for priority traffic. Counted per process: N processes hold N × max.
 */
import { GatewayError } from "../errors/gateway_error.ts";

/** Seconds a refused request is told to wait: a slot frees as soon as any answer ends. */
const RETRY_AFTER_S = 1;

export class CapacitySlots {
  readonly max: number;
  readonly reserved: number;
  #inflight = 0;

  /** `max` 0: no bound (the count is still kept). `priorityShare` in [0, 1]. */
  constructor(max: number, priorityShare: number) {
    this.max = max;
    this.reserved = Math.ceil(max * priorityShare);
  }

  /** Upstream requests holding a slot now. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Takes a slot or throws the 429; every taken slot is given back by exactly one `release`. */
  take(priority: boolean): void {
    if (this.max > 0) {
      if (this.#inflight >= this.max) {
        throw new GatewayError("service_capacity_saturated", { retryAfter: RETRY_AFTER_S });
      }
      if (!priority && this.#inflight >= this.max - this.reserved) {
        throw new GatewayError("standard_capacity_saturated", { retryAfter: RETRY_AFTER_S });
      }
    }
    this.#inflight++;
  }

  release(): void {
    this.#inflight--;
  }
}
