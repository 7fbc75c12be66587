/** Native pass-through adjustments shared by every protocol: only the model id changes. */
import type { EncodeContext, UpstreamRequestOptions } from "./codec.ts";

/** The client's body for the upstream: a shallow copy naming the upstream's model id. */
export function withUpstreamModel(
  body: Record<string, unknown>,
  opts: UpstreamRequestOptions,
): Record<string, unknown> {
  return { ...body, model: opts.upstreamModel };
}

/** A non-streaming upstream answer for the client: a shallow copy naming the requested model (spec §4.7). */
export function relayResponse(json: Record<string, unknown>, ctx: EncodeContext): Record<string, unknown> {
  return { ...json, model: ctx.model };
}
