/** Native (Chat → Chat) request and non-streaming response adjustments. */
import type { EncodeContext, UpstreamRequestOptions } from "../codec.ts";
import { isObject } from "./validate.ts";

/** Shallow copy with the upstream model; a streaming request always asks for usage (metering). */
export function prepareNativeRequest(
  body: Record<string, unknown>,
  opts: UpstreamRequestOptions,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, model: opts.upstreamModel };
  if (body.stream === true) {
    const options = isObject(body.stream_options) ? body.stream_options : {};
    out.stream_options = { ...options, include_usage: true };
  }
  return out;
}

/** Shallow copy with the model id the client asked for. */
export function relayResponse(json: Record<string, unknown>, ctx: EncodeContext): Record<string, unknown> {
  return { ...json, model: ctx.model };
}
