/** Where each family's upstream lives (README "Configuration": one native protocol per family). */
import type { Family } from "../catalog/models.ts";
import type { Config } from "../config/env.ts";
import type { ProtocolName } from "../protocols/codec.ts";

export interface UpstreamTarget {
  baseUrl: string;
  /** One key per upstream account (theta has several; the others one). */
  keys: string[];
  protocol: ProtocolName;
}

export const FAMILY_PROTOCOL: Record<Family, ProtocolName> = {
  alpha: "openai_chat",
  beta: "anthropic",
  gamma: "openai_responses",
  eta: "openai_responses",
  theta: "openai_chat",
};

export type UpstreamTargets = Partial<Record<Family, UpstreamTarget>>;

const splitKeys = (v: string | undefined) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

export function targetsFromConfig(config: Config): UpstreamTargets {
  const t: UpstreamTargets = {};
  const put = (f: Family, url: string | undefined, keys: string[]) => {
    if (url) {
      t[f] = {
        baseUrl: url.replace(/\/+$/, ""),
        keys: keys.length ? keys : [""],
        protocol: FAMILY_PROTOCOL[f],
      };
    }
  };
  put("alpha", config.ALPHA_UPSTREAM_URL, splitKeys(config.ALPHA_UPSTREAM_KEY));
  put("beta", config.BETA_UPSTREAM_URL, splitKeys(config.BETA_UPSTREAM_KEY));
  put("gamma", config.DELTA_UPSTREAM_URL, splitKeys(config.DELTA_UPSTREAM_KEY));
  put("eta", config.DELTA_UPSTREAM_URL, splitKeys(config.DELTA_UPSTREAM_KEY));
  put("theta", config.THETA_UPSTREAM_URL, splitKeys(config.THETA_UPSTREAM_KEYS));
  return t;
}

/** Demo mode: every family at the built-in simulator. */
export function simulatorTargets(simUrl: string): UpstreamTargets {
  const t: UpstreamTargets = {};
  for (const f of Object.keys(FAMILY_PROTOCOL) as Family[]) {
    t[f] = {
      baseUrl: simUrl,
      keys: f === "theta" ? ["sim-theta-1", "sim-theta-2"] : [`sim-${f}`],
      protocol: FAMILY_PROTOCOL[f],
    };
  }
  return t;
}
