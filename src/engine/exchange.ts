/**
 * One admitted request's upstream exchange: what forward.ts and json_answer.ts share. It holds the request's
 * body and IR, so nothing that lives as long as a stream may keep it (forward.ts `makePipeline`).
 */
import type { App } from "../app.ts";
import type { ModelEntry } from "../catalog/models.ts";
import type { FamilyPolicy } from "../families/policy.ts";
import type { IRRequest } from "../ir/request.ts";
import type { EncodeContext, Protocol } from "../protocols/codec.ts";
import type { RouteContext } from "../request/context.ts";
import type { UpstreamTarget } from "../upstream/targets.ts";
import type { AnswerTrace } from "./answer_trace.ts";
import type { Settlement } from "./settlement.ts";

export interface Exchange {
  app: App;
  /** Its `headers` are the answer's one header bag: an error carries them, the 200 adds request-id and the hold. */
  ctx: RouteContext;
  model: ModelEntry;
  policy: FamilyPolicy;
  /** The client's surface and the family's upstream protocol (the same object when native). */
  surface: Protocol;
  upstream: Protocol;
  native: boolean;
  target: UpstreamTarget;
  /** The upstream body: an object to serialise, or the client's bytes when the native body is unchanged. */
  upstreamBody: Record<string, unknown> | Uint8Array;
  /** The model name that body carries (the family's `upstreamModel`, else the gateway's id). */
  upstreamModel: string;
  /** The decoded request, conversation included (the family's dispatch reads it). */
  ir: IRRequest;
  encodeCtx: EncodeContext;
  /** The request's hold and its one settlement guard (settlement.ts). */
  settlement: Settlement;
  inputTokens: number;
  /** The output the hold covers (the request's max tokens, else the default reserve). */
  outputBudget: number;
  /** The client's decoded body (after the family's rules). */
  body: Record<string, unknown>;
  abort: AbortController;
  /** Collects how the answer ends, for the family's request session (only when it has one). */
  answer?: AnswerTrace;
}
