/** Each family's upstream target from the configuration (or the demo simulator), as its policy describes it. */
import type { Family } from "../catalog/models.ts";
import type { Config } from "../config/env.ts";
import type { UpstreamTargets } from "../upstream/targets.ts";
import { FAMILY_POLICIES } from "./registry.ts";

const FAMILIES = Object.keys(FAMILY_POLICIES) as Family[];
const splitKeys = (v: string | undefined) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

export function targetsFromConfig(config: Config): UpstreamTargets {
  const t: UpstreamTargets = {};
  for (const f of FAMILIES) {
    const up = FAMILY_POLICIES[f].upstream;
    const url = config[up.urlVar];
    if (!url) continue;
    const keys = splitKeys(config[up.keysVar]);
    t[f] = { baseUrl: url.replace(/\/+$/, ""), keys: keys.length ? keys : [""], protocol: up.protocol };
  }
  return t;
}

/** Demo mode: every family at the built-in simulator. */
export function simulatorTargets(simUrl: string): UpstreamTargets {
  const t: UpstreamTargets = {};
  for (const f of FAMILIES) {
    const up = FAMILY_POLICIES[f].upstream;
    const keys = up.simulatorAccounts === 1
      ? [`sim-${f}`]
      : Array.from({ length: up.simulatorAccounts }, (_, i) => `sim-${f}-${i + 1}`);
    t[f] = { baseUrl: simUrl, keys, protocol: up.protocol };
  }
  return t;
}
