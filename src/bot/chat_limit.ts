/**
 * The per-chat command rate (BOT_COMMANDS_PER_MINUTE): a burst of that many messages and
 * button presses, then one more every 60/N s, on the gateway's own GCRA limiter (per process). A refused
 * chat is told once per minute at most, so a flood never turns into a flood of refusals.
 */
import { GcraLimiter } from "../util/rate_limiter.ts";

export type Admission = { ok: true } | { ok: false; retryAfter: number; tell: boolean };

export class ChatLimit {
  readonly #commands: GcraLimiter;
  readonly #refusals = new GcraLimiter({ ratePerSecond: 1 / 60, burst: 1 });

  constructor(perMinute: number) {
    this.#commands = new GcraLimiter({ ratePerSecond: perMinute / 60, burst: perMinute });
  }

  admit(chatId: number, nowMs: number): Admission {
    const id = String(chatId);
    const retryAfter = this.#commands.take(id, nowMs);
    if (retryAfter === 0) return { ok: true };
    return { ok: false, retryAfter, tell: this.#refusals.take(id, nowMs) === 0 };
  }
}
