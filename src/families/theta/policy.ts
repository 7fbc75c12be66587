/**
 * Family theta (spec §4.7, §7.6): a key paused for theta is refused; every request waits for its upstream
 * account in the shared queue and may fall back to another model (dispatch.ts); one generation is bounded.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import { COMMON_CAP_CODES, type FamilyPolicy, plainPolicy } from "../policy.ts";
import { refuseImages } from "./image_rule.ts";
import { thetaDispatch, type ThetaQueue } from "./dispatch.ts";
import { admitThetaRequest } from "./request_limits.ts";
import { thetaSettings } from "./key_settings.ts";

/** Theta's policy over one gateway's account queue. */
export const thetaPolicy = (queue: ThetaQueue): FamilyPolicy =>
  plainPolicy({
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
    dispatch: (target, req) => thetaDispatch(queue, target, req),
    // spec §4.7, §8.4: one answer is generated for at most 10 minutes.
    runLimit: (config) => ({ ms: config.THETA_GENERATION_TIMEOUT_MS, code: "generation_timeout" }),
    admitKey(account) {
      if (thetaSettings(account.rec).paused) throw new GatewayError("api_key_paused");
    },
    rawBody(model, surface, body) {
      refuseImages(model, surface, body);
      return body;
    },
    // The key's own hourly and daily theta request limits (spec §7.6), counted before the hold.
    admitRequest: admitThetaRequest,
    // spec §4.7: theta searches when the model decides; there is no parameter to enable it, so an offered
    // hosted web_search tool (Codex sends one by default) is dropped.
    request(_model, ir) {
      delete ir.hostedWebSearch;
    },
  });
