/**
 * The families of one gateway: each family's policy (gamma and eta share theirs) with the services they
 * keep state in — theta's account queue and gamma/eta's tool loops — built from the gateway's config and
 * closed with it.
 */
import type { Family } from "../catalog/models.ts";
import type { Config } from "../config/env.ts";
import type { Store } from "../store/store.ts";
import type { Logger } from "../util/log.ts";
import { alphaPolicy } from "./alpha/policy.ts";
import { betaPolicy } from "./beta/policy.ts";
import { deltaPolicy } from "./delta/policy.ts";
import { ToolLoops } from "./delta/tool_loops.ts";
import type { FamilyPolicy } from "./policy.ts";
import { ThetaQueue } from "./theta/dispatch.ts";
import { thetaPolicy } from "./theta/policy.ts";

export type FamilyPolicies = Readonly<Record<Family, FamilyPolicy>>;

/** What the families' services need from the gateway. */
export interface FamilyDeps {
  store: Store;
  log: Logger;
  /** The gateway's clock (tests move it). */
  now(): number;
}

export interface Families {
  readonly policies: FamilyPolicies;
  /** Ends the services' timers and watches after their writes in flight landed. */
  close(): Promise<void>;
}

export function buildFamilies(config: Config, deps: FamilyDeps): Families {
  const queue = new ThetaQueue(deps.store, config, deps.now, deps.log);
  const loops = new ToolLoops(
    { maxOpen: config.DELTA_MAX_OPEN_LOOPS, ttlMs: config.DELTA_LOOP_TTL_MS },
    deps.log,
  );
  const delta = deltaPolicy(loops);
  return {
    policies: Object.freeze({
      alpha: alphaPolicy(),
      beta: betaPolicy(),
      gamma: delta,
      eta: delta,
      theta: thetaPolicy(queue),
    }),
    async close() {
      await Promise.all([queue.close(), loops.close()]);
    },
  };
}
