/**
 * Theta's `dispatch` (spec §4.7, docs/families/theta.md): the request waits in the shared account queue for
 * its account (account_pool.ts), then runs on it with the requested model — or, when that model's limit is
 * exhausted on the account (a 429 remembered until its Retry-After), with the nearest model that accepts the
 * request (fallback.ts), decided before the first character of the answer. The answer names the requested
 * model and is charged at its rate; `x-theta-served-by` says which model answered, `x-theta-queue-wait-ms`
 * how long the request waited.
 */
import type { Config } from "../../config/env.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { Store } from "../../store/store.ts";
import type { UpstreamTarget } from "../../upstream/targets.ts";
import type { Logger } from "../../util/log.ts";
import type { DispatchRequest, UpstreamLease } from "../policy.ts";
import { AccountPool } from "./account_pool.ts";
import { nextModel, type RequestNeeds } from "./fallback.ts";
import { sessionOf } from "./session.ts";

/** An exhausted model without a Retry-After is retried on the account after this long. */
const DEFAULT_EXHAUSTED_MS = 60_000;
/** Waiters beyond this many are refused at once (the pool document stays small). */
const MAX_QUEUE = 200;

/**
 * The account queue of one gateway (spec §4.7). Its pool is made at the first theta request, sized by the
 * upstream target's keys; its holder id is this gateway's own. `close` stops its watch and renewal.
 */
export class ThetaQueue {
  #pool: AccountPool | undefined;

  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  pool(accounts: number): AccountPool {
    if (this.#pool) return this.#pool;
    const holder = `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    return this.#pool = new AccountPool(
      this.store,
      holder,
      {
        accounts,
        idleMs: this.config.THETA_IDLE_RELEASE_MS,
        ttlMs: this.config.LEASE_TTL_MS,
        maxQueue: MAX_QUEUE,
      },
      this.config.THETA_QUEUE_TIMEOUT_MS,
      this.now,
      this.log,
    );
  }

  async close(): Promise<void> {
    await this.#pool?.close();
  }
}

export async function thetaDispatch(
  queue: ThetaQueue,
  target: UpstreamTarget,
  req: DispatchRequest,
): Promise<UpstreamLease> {
  const grant = await queue.pool(target.keys.length).acquire({
    id: req.requestId,
    keyId: req.keyId,
    session: sessionOf(req.headers, req.body, req.keyId),
    signal: req.signal,
  });
  req.queued(grant.waitedMs);
  const needs: RequestNeeds = {
    images: req.ir.messages.some((m) => m.parts.some((p) => p.type === "image")),
    inputTokens: req.inputTokens,
    outputBudget: req.outputBudget,
  };
  // The lease's closures below live until settlement: they capture these, never `req` (which holds the
  // request's body and IR: a stream would keep its prompt alive).
  const requested = req.model.id;
  const clock = req.now;
  const now = clock();
  // Models this request may not use on its account: exhausted there, or already refused for it.
  const unavailable = new Set(
    Object.entries(grant.exhausted).filter(([, until]) => until > now).map(([m]) => m),
  );
  const refusedNow: Record<string, number> = {};
  const wait = { "x-theta-queue-wait-ms": String(grant.waitedMs) };
  const choose = (): string => {
    if (!unavailable.has(requested)) return requested;
    const next = nextModel(requested, needs, unavailable);
    if (next === undefined) throw new GatewayError("provider_at_capacity", { headers: wait });
    return next;
  };
  let serving: string;
  try {
    serving = choose();
  } catch (err) {
    grant.release();
    throw err;
  }
  return {
    key: target.keys[grant.account]!,
    ...(serving === requested ? {} : { model: serving }),
    headers: { ...wait, "x-theta-served-by": serving },
    release: () => grant.release(refusedNow),
    refused(retryAfterSeconds) {
      const until = clock() +
        (retryAfterSeconds === undefined ? DEFAULT_EXHAUSTED_MS : retryAfterSeconds * 1000);
      refusedNow[serving] = until;
      unavailable.add(serving);
      serving = choose();
      return { model: serving, headers: { "x-theta-served-by": serving } };
    },
  };
}
