/** How a failing upstream becomes the family's error (spec §7.4–spec §7.6), before the stream starts and inside it. */
import { errorSpec } from "../errors/codes.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { UpstreamErrorInfo } from "../protocols/codec.ts";
import type { FamilyCodes } from "./policy.ts";

/** A non-2xx upstream answer before any byte went to the client. */
export function upstreamStatusError(
  codes: FamilyCodes,
  status: number,
  info: UpstreamErrorInfo,
  retryAfter: string | null,
): GatewayError {
  const ra = retryAfterSeconds(retryAfter);
  if (status === 429) return new GatewayError(codes.rateLimited, { retryAfter: ra ?? 1 });
  if (status === 400 || status === 413 || status === 422) {
    const text = `${info.code ?? ""} ${info.message}`.toLowerCase();
    if (/context|too long|too large|maximum.*tokens/.test(text)) {
      return new GatewayError("context_length_exceeded");
    }
    return new GatewayError("invalid_request", { detail: "Провайдер отклонил запрос." });
  }
  if (status === 500 && codes.serverError) return new GatewayError(codes.serverError);
  return unavailableError(codes, ra);
}

/** An upstream Retry-After in seconds: the delta-seconds form only (a date or anything else counts as absent). */
export function retryAfterSeconds(value: string | null): number | undefined {
  return value !== null && /^\d+$/.test(value) ? Number(value) : undefined;
}

const DOWN_RETRY_AFTER_S = 2;

/**
 * The provider stays down after the gateway's one retry (503, spec §7.2): the code's fixed Retry-After where
 * the spec gives one (theta_unavailable: 30 s, spec §7.6), else the upstream's own, else 2 s — the retry
 * 50–150 ms later already failed.
 */
export function unavailableError(codes: FamilyCodes, upstreamRetryAfter: number | undefined): GatewayError {
  return new GatewayError(codes.unavailable, {
    retryAfter: errorSpec(codes.unavailable).retryAfter ?? upstreamRetryAfter ?? DOWN_RETRY_AFTER_S,
  });
}
