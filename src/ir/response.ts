/** Internal non-streaming response: upstream JSON decoders produce it, surface JSON encoders render it. */
import type { IRStopReason } from "./events.ts";
import type { IRUsage } from "./usage.ts";

export type IROutputBlock =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; signature?: string }
  | { type: "tool_call"; id: string; name: string; arguments: string };

export interface IRResponse {
  id: string;
  model: string;
  content: IROutputBlock[];
  stopReason: IRStopReason;
  stopSequence?: string;
  /** Undefined when the upstream reported none. */
  usage?: IRUsage;
}
