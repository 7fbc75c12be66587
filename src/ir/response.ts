/** Internal non-streaming response: upstream JSON decoders produce it, surface JSON encoders render it. */
import type { IRCitation, IRServerTool, IRStopReason } from "./events.ts";
import type { IRUsage } from "./usage.ts";

export type IROutputBlock =
  /** `citations`: sources the whole block cites (only when the upstream gave some). */
  | { type: "text"; text: string; citations?: IRCitation[] }
  | { type: "reasoning"; text: string; signature?: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  /** A provider-run tool and its result, in answer order (see IRServerTool). */
  | ({ type: "server_tool" } & IRServerTool);

export interface IRResponse {
  id: string;
  model: string;
  content: IROutputBlock[];
  stopReason: IRStopReason;
  stopSequence?: string;
  /** Undefined when the upstream reported none. */
  usage?: IRUsage;
}
