import { type ErrorCode, errorSpec } from "./codes.ts";

/** The one error type of the gateway. Rendered into an envelope only by render.ts. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  /** Seconds for Retry-After; overrides the table's fixed value. */
  readonly retryAfter: number | undefined;
  /** Extra Russian detail appended to the table message (never user secrets). */
  readonly detail: string | undefined;
  /** Extra response headers (for example Allow on 405). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    opts: { param?: string | null; retryAfter?: number; detail?: string; headers?: Record<string, string> } =
      {},
  ) {
    super(code);
    this.name = "GatewayError";
    this.code = code;
    this.param = opts.param ?? null;
    this.retryAfter = opts.retryAfter ?? errorSpec(code).retryAfter;
    this.detail = opts.detail;
    this.headers = opts.headers;
  }

  get status(): number {
    return errorSpec(this.code).status;
  }
}

/** Shorthand for a 400 about one field. */
export function fieldError(
  code: ErrorCode,
  param: string,
  detail?: string,
): GatewayError {
  return new GatewayError(code, detail === undefined ? { param } : { param, detail });
}
