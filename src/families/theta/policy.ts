/**
 * Family theta (spec §4.7, §7.6): a key paused for theta is refused. The account queue and fallback arrive
 * with the theta issue; until then the first upstream key serves.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import { COMMON_CAP_CODES, plainPolicy } from "../policy.ts";
import { refuseImages } from "./image_rule.ts";

export const thetaPolicy = plainPolicy({
  protocol: "openai_chat",
  urlVar: "THETA_UPSTREAM_URL",
  keysVar: "THETA_UPSTREAM_KEYS",
  simulatorAccounts: 2, // an account pool (spec §4.7)
}, {
  unavailable: "theta_unavailable",
  inStream: "stream_service_error",
  rateLimited: "standard_capacity_saturated",
  timedOut: "upstream_timeout",
  invalidResponse: "upstream_invalid_response",
  caps: COMMON_CAP_CODES,
}, {
  admitKey(account) {
    if (account.rec.thetaPaused) throw new GatewayError("api_key_paused");
  },
  rawBody(model, surface, body) {
    refuseImages(model, surface, body);
    return body;
  },
  // spec §4.7: theta searches when the model decides; there is no parameter to enable it, so an offered
  // hosted web_search tool (Codex sends one by default) is dropped.
  request(_model, ir) {
    delete ir.hostedWebSearch;
  },
});
