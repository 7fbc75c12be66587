/**
 * Family beta (spec §4.5): the operator's server prompt on every id but the fable ones (spec §2.1), and
 * the provider's structured refusal as `cyber_refusal` (spec §7.3). A Responses client's hosted web_search
 * becomes beta's own web search server tool in the Messages translation.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IREvent } from "../../ir/events.ts";
import { COMMON_CAP_CODES, type FamilyPolicy, plainPolicy } from "../policy.ts";
import { HOSTED_WEB_SEARCH_MAX_USES } from "../../protocols/anthropic/request_encode.ts";
import { checkServerTools, searchUsesOf } from "./server_tools.ts";

/** Anthropic `stop_reason: "refusal"` arrives as the internal content_filter stop. */
function refusal(ev: IREvent): GatewayError | undefined {
  return ev.type === "finish" && ev.reason === "content_filter"
    ? new GatewayError("cyber_refusal")
    : undefined;
}

export const betaPolicy = (): FamilyPolicy =>
  plainPolicy({
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
    // Server tools (spec §4.5, `server_tools.ts`) before anything is held; the same object back, so the
    // client's own bytes are forwarded.
    rawBody(_model, surface, body) {
      if (surface === "anthropic") checkServerTools(body);
      return body;
    },
    // Each search the provider bills costs 0.01 (spec §8.1 p.6): the most a request can run is held too.
    searchBudget: (surface, body, ir) =>
      surface === "anthropic" ? searchUsesOf(body) : ir?.hostedWebSearch ? HOSTED_WEB_SEARCH_MAX_USES : 0,
    serverPrompt: (model, config) => model.noServerPrompt ? undefined : config.BETA_SERVER_PROMPT,
    // Before anything is sent a refusal is an ordinary 400 (free); once the stream started, its error frame.
    beforeContent: refusal,
    inspect: refusal,
    answered: (res) => res.stopReason === "content_filter" ? new GatewayError("cyber_refusal") : undefined,
  });
