/** Error bodies in each protocol's shape (Anthropic §2.8, OpenAI §3.8 / §4.8). */

export type Flavor = "anthropic" | "openai";

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const OPENAI_TYPES: Record<number, [string, string | null]> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["permission_error", null],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
};

const MESSAGES: Record<number, string> = {
  400: "Invalid request",
  401: "Missing or invalid API key",
  403: "Permission denied",
  404: "Not found",
  429: "Rate limit reached (simulated)",
  500: "Internal server error (simulated)",
  503: "Service unavailable (simulated)",
  529: "Overloaded",
};

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPES[status] ??
    (status === 503 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error");
}

export function openaiErrorType(status: number): [string, string | null] {
  return OPENAI_TYPES[status] ?? (status >= 500 ? ["server_error", null] : ["invalid_request_error", null]);
}

let reqCounter = 0;
export function requestId(): string {
  return "req_sim" + (++reqCounter).toString(36).padStart(8, "0");
}

export function errorBody(flavor: Flavor, status: number, message?: string, rid?: string): string {
  const msg = message ?? MESSAGES[status] ?? `Simulated error ${status}`;
  if (flavor === "anthropic") {
    return JSON.stringify({
      type: "error",
      error: { type: anthropicErrorType(status), message: msg },
      request_id: rid ?? requestId(),
    });
  }
  const [type, code] = openaiErrorType(status);
  return JSON.stringify({ error: { message: msg, type, param: null, code } });
}

export function errorResponse(flavor: Flavor, status: number, message?: string): Response {
  const rid = requestId();
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [flavor === "anthropic" ? "request-id" : "x-request-id"]: rid,
  };
  if (status === 429 || status === 503 || status === 529) headers["retry-after"] = "1";
  return new Response(errorBody(flavor, status, message, rid), { status, headers });
}
