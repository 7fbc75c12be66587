/** How each family reports a failing upstream (§7.4–§7.6): before the stream starts and inside it. */
import type { Family } from "../catalog/models.ts";
import type { ErrorCode } from "../errors/codes.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { UpstreamErrorInfo } from "../protocols/codec.ts";

const UNAVAILABLE: Record<Family, ErrorCode> = {
  alpha: "alpha_unavailable",
  beta: "upstream_unavailable",
  gamma: "delta_unavailable",
  eta: "delta_unavailable",
  theta: "theta_unavailable",
};

const IN_STREAM: Record<Family, ErrorCode> = {
  alpha: "alpha_unavailable",
  beta: "stream_service_error",
  gamma: "delta_upstream_error",
  eta: "delta_upstream_error",
  theta: "stream_service_error",
};

/** The upstream sent no response head within UPSTREAM_HEADERS_TIMEOUT_MS: spec §7.2 "not finished in time". */
const TIMED_OUT: Record<Family, ErrorCode> = {
  alpha: "upstream_timeout",
  beta: "upstream_timeout",
  gamma: "upstream_timeout",
  eta: "upstream_timeout",
  theta: "upstream_timeout",
};

/** The provider answered 429: alpha has its own code (§7.3 note), the others keep the common one. */
const RATE_LIMITED: Record<Family, ErrorCode> = {
  alpha: "alpha_provider_rate_limit",
  beta: "standard_capacity_saturated",
  gamma: "standard_capacity_saturated",
  eta: "standard_capacity_saturated",
  theta: "standard_capacity_saturated",
};

/** The upstream could not be reached or timed out before answering. */
export function unreachable(family: Family): GatewayError {
  return new GatewayError(UNAVAILABLE[family]);
}

/** The upstream did not start answering in time (nothing was charged). */
export function headersTimeout(family: Family): GatewayError {
  return new GatewayError(TIMED_OUT[family]);
}

/** A non-2xx upstream answer before any byte went to the client. */
export function upstreamStatusError(
  family: Family,
  status: number,
  info: UpstreamErrorInfo,
  retryAfter: string | null,
): GatewayError {
  const ra = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (status === 429) return new GatewayError(RATE_LIMITED[family], { retryAfter: ra ?? 1 });
  if (status === 400 || status === 413 || status === 422) {
    const text = `${info.code ?? ""} ${info.message}`.toLowerCase();
    if (/context|too long|too large|maximum.*tokens/.test(text)) {
      return new GatewayError("context_length_exceeded");
    }
    return new GatewayError("invalid_request", { detail: "Провайдер отклонил запрос." });
  }
  if (status === 500 && (family === "gamma" || family === "eta")) {
    return new GatewayError("delta_upstream_error");
  }
  return new GatewayError(UNAVAILABLE[family], ra === undefined ? {} : { retryAfter: ra });
}

/** An in-band error frame from the upstream after the stream started. */
export function inStreamError(family: Family): GatewayError {
  return new GatewayError(IN_STREAM[family]);
}

/** The upstream answered 200 with something its protocol does not allow. */
export function invalidResponse(family: Family): GatewayError {
  return family === "gamma" || family === "eta"
    ? new GatewayError("delta_upstream_error")
    : new GatewayError("upstream_invalid_response");
}
