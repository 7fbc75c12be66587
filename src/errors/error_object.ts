import { errorSpec } from "./codes.ts";
import type { GatewayError } from "./gateway_error.ts";

/** The spec §2.5 error object. */
export interface ErrorObject {
  message: string;
  code: string;
  type: string;
  param: string | null;
  action: string;
  request_id: string;
}

export function errorObject(err: GatewayError, requestId: string): ErrorObject {
  const spec = errorSpec(err.code);
  const text = err.detail ? `${spec.message} ${err.detail}` : spec.message;
  return {
    message: `${text} [${err.code} · ${requestId}]`,
    code: err.code,
    type: spec.type,
    param: err.param,
    action: spec.action,
    request_id: requestId,
  };
}
