/** Extraction failures, each a GatewayError with a Russian detail saying which limit or defect. */
import { GatewayError } from "../errors/gateway_error.ts";

/** The document is over a limit of spec §8.2 (or a hostile-file bound): refused, nothing stored. */
export function overLimit(detail: string): GatewayError {
  return new GatewayError("file_limit_exceeded", { detail });
}

/** The bytes are not a readable document of the declared format. */
export function unreadable(detail: string): GatewayError {
  return new GatewayError("file_unreadable", { detail });
}
