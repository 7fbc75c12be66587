/** The upstream HTTP call: protocol headers, account key, abort wiring, a headers timeout and one safe retry. */
import { deadline } from "../util/ticker.ts";
import type { ProtocolName } from "../protocols/codec.ts";
import { withOneRetry } from "./retry.ts";
import type { UpstreamResponse } from "./upstream_response.ts";
import type { UpstreamFetch } from "./wire_client.ts";

export interface UpstreamCall {
  url: string;
  protocol: ProtocolName;
  key: string;
  body: Record<string, unknown> | Uint8Array;
  /** Aborts the whole upstream exchange (client gone, failure); also fired by the headers timeout. */
  abort: AbortController;
  /** Undefined: no bound of its own (the caller bounds the whole run). */
  headersTimeoutMs?: number;
  /** Client headers the protocol forwards on a native route (Protocol.nativeHeaders). */
  extraHeaders?: Record<string, string>;
  /** The retry's jitter source, in [0, 1) (App.random). */
  random(): number;
  /** The HTTP client (App.upstreamFetch: the wire client or Deno's fetch). */
  fetch: UpstreamFetch;
}

export function upstreamHeaders(protocol: ProtocolName, key: string): Record<string, string> {
  return protocol === "anthropic"
    ? { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" }
    : { "content-type": "application/json", authorization: `Bearer ${key}` };
}

/**
 * Resolves with the upstream's response head, after at most one retry (retry.ts); rejects on network
 * failure, abort or headers timeout. The headers timeout bounds both attempts together, connecting included:
 * Deno's fetch has no separate connect timeout (docs/api.md "Errors").
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const stop = call.headersTimeoutMs === undefined ? () => {} : deadline(
    call.headersTimeoutMs,
    () => call.abort.abort(new DOMException("upstream headers timeout", "TimeoutError")),
  );
  const init = {
    method: "POST",
    headers: { ...call.extraHeaders, ...upstreamHeaders(call.protocol, call.key) },
    body: call.body instanceof Uint8Array ? call.body : JSON.stringify(call.body),
    signal: call.abort.signal,
  };
  try {
    return await withOneRetry(() => call.fetch(call.url, init), call.abort.signal, call.random);
  } finally {
    stop();
  }
}
