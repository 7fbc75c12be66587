/** Renders a GatewayError into one of the three envelopes of spec §7.1. The only place error bodies are built. */
import { errorSpec } from "./codes.ts";
import { type ErrorObject, errorObject } from "./error_object.ts";
import type { GatewayError } from "./gateway_error.ts";

/** anthropic: Messages and count_tokens; openai: Chat Completions, Responses and the rest; detail: files and usage. */
export type Envelope = "anthropic" | "openai" | "detail";

export function errorBody(err: GatewayError, envelope: Envelope, requestId: string): Record<string, unknown> {
  const obj: ErrorObject = errorObject(err, requestId);
  const auth = errorSpec(err.code).auth === true;
  if (envelope === "anthropic") {
    return auth
      ? { type: "error", error: obj, detail: { error: obj }, request_id: requestId }
      : { type: "error", error: obj, request_id: requestId };
  }
  if (envelope === "detail" && !auth) return { detail: { error: obj }, request_id: requestId };
  return auth
    ? { error: obj, detail: { error: obj }, request_id: requestId }
    : { error: obj, request_id: requestId };
}

export function errorHeaders(err: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { ...err.headers };
  if (err.retryAfter !== undefined) headers["retry-after"] = String(err.retryAfter);
  return headers;
}

export function errorResponse(
  err: GatewayError,
  envelope: Envelope,
  requestId: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(errorBody(err, envelope, requestId)), {
    status: err.status,
    headers: {
      "content-type": "application/json",
      "request-id": requestId,
      ...errorHeaders(err),
      ...headers,
    },
  });
}
