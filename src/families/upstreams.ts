/** Each family's upstream target from the configuration (or the demo simulator), as its policy describes it. */
import { FAMILIES } from "../catalog/models.ts";
import type { Config } from "../config/env.ts";
import type { UpstreamTargets } from "../upstream/targets.ts";
import type { FamilyPolicies } from "./registry.ts";

const splitKeys = (v: string | undefined) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

export function targetsFromConfig(config: Config, families: FamilyPolicies): UpstreamTargets {
  const t: UpstreamTargets = {};
  for (const f of FAMILIES) {
    const up = families[f].upstream;
    const url = config[up.urlVar];
    if (!url) continue;
    const keys = splitKeys(config[up.keysVar]);
    t[f] = { baseUrl: url.replace(/\/+$/, ""), keys: keys.length ? keys : [""], protocol: up.protocol };
  }
  return t;
}

/** Demo mode: every family at the built-in simulator. */
export function simulatorTargets(simUrl: string, families: FamilyPolicies): UpstreamTargets {
  const t: UpstreamTargets = {};
  for (const f of FAMILIES) {
    const up = families[f].upstream;
    const keys = up.simulatorAccounts === 1
      ? [`sim-${f}`]
      : Array.from({ length: up.simulatorAccounts }, (_, i) => `sim-${f}-${i + 1}`);
    t[f] = { baseUrl: simUrl, keys, protocol: up.protocol };
  }
  return t;
}
