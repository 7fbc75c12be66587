/** The upstream HTTP call: protocol headers, account key, abort wiring and a headers timeout. */
import { deadline } from "../util/ticker.ts";
import type { ProtocolName } from "../protocols/codec.ts";

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
}

export function upstreamHeaders(protocol: ProtocolName, key: string): Record<string, string> {
  return protocol === "anthropic"
    ? { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" }
    : { "content-type": "application/json", authorization: `Bearer ${key}` };
}

/** Resolves with the upstream's response head; rejects on network failure, abort or headers timeout. */
export async function callUpstream(call: UpstreamCall): Promise<Response> {
  const stop = call.headersTimeoutMs === undefined ? () => {} : deadline(
    call.headersTimeoutMs,
    () => call.abort.abort(new DOMException("upstream headers timeout", "TimeoutError")),
  );
  try {
    return await fetch(call.url, {
      method: "POST",
      headers: { ...call.extraHeaders, ...upstreamHeaders(call.protocol, call.key) },
      body: call.body instanceof Uint8Array
        ? (call.body as Uint8Array<ArrayBuffer>)
        : JSON.stringify(call.body),
      signal: call.abort.signal,
    });
  } finally {
    stop();
  }
}
