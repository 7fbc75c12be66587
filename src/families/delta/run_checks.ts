/**
 * Gamma/eta's checks of an upstream answer (spec §7.5, §6 rule 4):
 * - `delta_model_mismatch`: the upstream reports another model than the one the request carried
 *   (`UpstreamCallFacts.upstreamModel`, from `deltaUpstreamModel`). Checked on the stream's `start` event
 *   (Responses `response.created`) before the 200 — a free 502 — and on any later `start` (a further run of the
 *   same answer) as the stream's error frame; on a JSON answer, its `model`, a free 502.
 * - `delta_output_limit_exceeded`: the provider's own output limit for the whole loop. Its signal is an
 *   answer cut like a budget cut (Responses `status: "incomplete"`, `incomplete_details.reason:
 *   "max_output_tokens"`) although the client gave no budget, or the reported output stayed below it. A JSON
 *   answer becomes a billed 502; a stream keeps its text and ends like a budget cut (spec §6 rule 4: the
 *   pipeline relays it unchanged). A cut at the client's own budget is the ordinary incomplete answer.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IREvent } from "../../ir/events.ts";
import type { IRResponse } from "../../ir/response.ts";
import type { UpstreamCallFacts } from "../policy.ts";

/**
 * Whether the model the upstream reported is the one asked for: the same name, or a dated snapshot of it
 * (`eta-4.6-2026-05-01` for `eta-4.6`, as OpenAI-style APIs report). An empty name tells nothing: accepted.
 */
export function sameUpstreamModel(reported: string, asked: string): boolean {
  return reported === "" || reported === asked || reported.startsWith(asked + "-");
}

function mismatch(reported: string, call: UpstreamCallFacts): GatewayError | undefined {
  return sameUpstreamModel(reported, call.upstreamModel)
    ? undefined
    : new GatewayError("delta_model_mismatch");
}

/** Before the 200: the first event names the model; once it passed, the 200 goes out. */
export function modelBeforeContent(ev: IREvent, call: UpstreamCallFacts): GatewayError | "pass" | undefined {
  if (ev.type !== "start") return undefined;
  return mismatch(ev.model, call) ?? "pass";
}

/** Every streamed event: a `start` after the 200 (a later run) is checked too, as the stream's error frame. */
export function modelInStream(ev: IREvent, call: UpstreamCallFacts): GatewayError | undefined {
  return ev.type === "start" ? mismatch(ev.model, call) : undefined;
}

/** A JSON answer from another model: a free 502. */
export function modelOfAnswer(res: IRResponse, call: UpstreamCallFacts): GatewayError | undefined {
  return mismatch(res.model, call);
}

/**
 * A JSON answer cut by the provider's own limit, not by the client's budget: 502 delta_output_limit_exceeded,
 * billed. With a budget and no reported usage the cut cannot be told apart from the budget's: ordinary.
 */
export function outputLimitOfAnswer(res: IRResponse, call: UpstreamCallFacts): GatewayError | undefined {
  if (res.stopReason !== "length") return undefined;
  const budget = call.maxOutputTokens;
  const providerCut = budget === undefined || (res.usage !== undefined && res.usage.outputTokens < budget);
  return providerCut ? new GatewayError("delta_output_limit_exceeded") : undefined;
}
