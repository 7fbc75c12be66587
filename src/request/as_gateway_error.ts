/** What a failure answers: its own code; a store that cannot be reached is 503 (spec §7.2), anything else 500. */
import { GatewayError } from "../errors/gateway_error.ts";
import { StoreUnavailableError } from "../store/unavailable.ts";

export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof StoreUnavailableError) return new GatewayError("service_unavailable", { retryAfter: 1 });
  return new GatewayError("internal_error");
}
