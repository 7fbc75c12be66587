/** Native (Chat → Chat) request adjustment: usage metering forced on for streams. */
import type { UpstreamRequestOptions } from "../codec.ts";
import { withUpstreamModel } from "../native.ts";
import { isObject } from "../../util/json.ts";

/** Shallow copy with the upstream model; a streaming request always asks for usage (metering). */
export function prepareNativeRequest(
  body: Record<string, unknown>,
  opts: UpstreamRequestOptions,
): Record<string, unknown> {
  const out = withUpstreamModel(body, opts);
  if (body.stream === true) {
    const options = isObject(body.stream_options) ? body.stream_options : {};
    out.stream_options = { ...options, include_usage: true };
  }
  return out;
}
