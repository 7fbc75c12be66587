/**
 * Family beta (spec §4.5): codes only so far; the server-tool rules arrive with the beta issue. A Responses
 * client's hosted web_search becomes beta's own web search server tool in the Messages translation.
 */
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
});
