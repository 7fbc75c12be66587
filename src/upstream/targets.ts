/** Where a family's upstream lives: built from the configuration by src/families/upstreams.ts. */
import type { Family } from "../catalog/models.ts";
import type { ProtocolName } from "../protocols/codec.ts";

export interface UpstreamTarget {
  baseUrl: string;
  /** One key per upstream account (a family may have a pool of them). */
  keys: string[];
  protocol: ProtocolName;
}

export type UpstreamTargets = Partial<Record<Family, UpstreamTarget>>;
