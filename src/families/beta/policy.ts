/** Family beta (spec §4.5): codes only so far; the server-tool rules arrive with the beta issue. */
import { GatewayError } from "../../errors/gateway_error.ts";
import { COMMON_CAP_CODES, plainPolicy } from "../policy.ts";

export const betaPolicy = plainPolicy({
  protocol: "anthropic",
  urlVar: "BETA_UPSTREAM_URL",
  keysVar: "BETA_UPSTREAM_KEY",
  simulatorAccounts: 1,
}, {
  unavailable: "upstream_unavailable",
  inStream: "stream_service_error",
  rateLimited: "standard_capacity_saturated",
  timedOut: "upstream_timeout",
  invalidResponse: "upstream_invalid_response",
  caps: COMMON_CAP_CODES,
}, {
  // spec §4.5: beta's search is its typed server tool on Messages; the Responses hosted tool has no mapping.
  request(_model, ir) {
    if (ir.hostedWebSearch) {
      throw new GatewayError("unsupported_parameter", { param: ir.hostedWebSearch.param });
    }
  },
});
