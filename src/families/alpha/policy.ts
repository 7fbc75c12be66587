/** Family alpha (spec §4.2, §7.4): the open field table, file translation, x-request-id, its own 429 code. */
import { applyFieldRules, compileFieldTable } from "../field_rules.ts";
import { COMMON_CAP_CODES, type FamilyPolicy, plainPolicy } from "../policy.ts";
import { ALPHA_FIELDS } from "./field_rules.ts";

const FIELDS = compileFieldTable(ALPHA_FIELDS);

export const alphaPolicy = (): FamilyPolicy =>
  plainPolicy({
    protocol: "openai_chat",
    urlVar: "ALPHA_UPSTREAM_URL",
    keysVar: "ALPHA_UPSTREAM_KEY",
    simulatorAccounts: 1,
  }, {
    unavailable: "alpha_unavailable",
    inStream: "alpha_unavailable",
    rateLimited: "alpha_provider_rate_limit", // spec §7.3 note: alpha's own reason for a provider 429
    timedOut: "upstream_timeout",
    invalidResponse: "upstream_invalid_response",
    caps: COMMON_CAP_CODES,
  }, {
    // spec §2.5: on Chat Completions and Responses the request id is also in x-request-id, errors included.
    answerHeaders: (surface, requestId): Record<string, string> =>
      surface === "anthropic" ? {} : { "x-request-id": requestId },
    rawBody: (model, surface, body) => applyFieldRules(FIELDS, model, surface, body),
    translatesFiles: true,
  });
