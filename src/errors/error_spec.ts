/** The shape of one row of the error table (src/errors/codes.ts) and the two common row builders. */

export type ErrorClass =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "billing_error"
  | "rate_limit_error"
  | "api_error"
  | "timeout_error";

export interface ErrorSpec {
  status: number;
  type: ErrorClass;
  message: string;
  action: string;
  /** Fixed Retry-After (seconds) where the spec gives one. */
  retryAfter?: number;
  /** Authentication failure: the body mirrors the object under `detail.error` (spec §5.4). */
  auth?: boolean;
}

/** A 400 about the request. */
export const bad = (message: string, action: string): ErrorSpec => ({
  status: 400,
  type: "invalid_request_error",
  message,
  action,
});

/** A 429 limit. */
export const limit = (message: string, action: string): ErrorSpec => ({
  status: 429,
  type: "rate_limit_error",
  message,
  action,
});
