/**
 * The automatic safety rule behind 429 `api_key_suspended` (spec §3.2, §5, §7.3 "key frozen by a safety rule";
 * docs/api.md "Errors"): a key whose requests keep being refused for bad input is suspended for a while.
 *
 * Bad input: a 400 refusal of the request itself (`BAD_INPUT`): its body, fields, parameters or destination
 * (an SSRF probe at the page fetch is one). Not counted: a model's refusal (`cyber_refusal`), money and rate
 * refusals (402, 429), anything else. Each key has a bucket of SUSPEND_BAD_REQUESTS such refusals refilling at
 * that many per SUSPEND_WINDOW_MS (GCRA, src/util/rate_limiter.ts); the refusal that finds it empty — the
 * (N+1)-th in quick succession, or any while they keep coming faster than N per window — suspends the key for
 * SUSPEND_FOR_MS. That refusal is still answered with its own 400; the key's next requests get the 429.
 *
 * One mechanism with the operator's `suspend`: the rule writes the key's `suspendedUntil` through
 * `Accounts.suspend`, as the admin action does, so the admin key view shows it and the operator lifts it
 * (`{"until": null}`); a longer suspension already set is never shortened. Counted per process in memory
 * (bounded like every limiter); N processes each count their own share of a key's refusals.
 */
import type { Account, Accounts } from "../accounts/accounts.ts";
import type { Config } from "../config/env.ts";
import { type ErrorCode, errorSpec } from "../errors/codes.ts";
import type { Logger } from "../util/log.ts";
import { GcraLimiter, type RateLimiter } from "../util/rate_limiter.ts";

/** The refusals that count: every 400 about the request (spec §7.2 "bad body or parameter") but these. */
const NOT_BAD_INPUT: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["cyber_refusal"]);

export function isBadInput(code: ErrorCode): boolean {
  return errorSpec(code).status === 400 && !NOT_BAD_INPUT.has(code);
}

export class SuspensionRule {
  readonly #bucket: RateLimiter | undefined;
  readonly #forMs: number;

  constructor(
    config: Pick<Config, "SUSPEND_BAD_REQUESTS" | "SUSPEND_WINDOW_MS" | "SUSPEND_FOR_MS">,
    private readonly accounts: Accounts,
    private readonly log: Logger,
  ) {
    const n = config.SUSPEND_BAD_REQUESTS;
    this.#bucket = n > 0
      ? new GcraLimiter({ ratePerSecond: n * 1000 / config.SUSPEND_WINDOW_MS, burst: n })
      : undefined;
    this.#forMs = config.SUSPEND_FOR_MS;
  }

  /** A request of `acc` was refused with `code` at `now`: counted when it is bad input; may suspend the key. */
  async refused(acc: Account, code: ErrorCode, now: number): Promise<void> {
    if (!this.#bucket || !isBadInput(code) || this.#bucket.take(acc.rec.id, now) === 0) return;
    const until = now + this.#forMs;
    const current = acc.rec.suspendedUntil;
    if (current !== null && current >= until) return;
    const fields = { key_id: acc.rec.id, until: new Date(until).toISOString(), rule: "bad_input" };
    try {
      await this.accounts.suspend(acc.rec.id, until);
      this.log.warn("key suspended", fields);
    } catch (err) {
      // In memory the key is suspended already; only its durability failed (the refusal still goes out).
      this.log.error("key suspended, not durably", {
        ...fields,
        error: err instanceof Error ? err.message : "?",
      });
    }
  }
}
