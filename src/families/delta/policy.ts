/**
 * Families gamma and eta (spec §4.6, §7.5) share one policy: the closed parameter list (`field_rules.ts`) and
 * the delta_ codes, including their own cap codes and a provider 500 as `delta_upstream_error`. The list drops
 * `thinking` and refuses every effort field, so no translation sends `reasoning.effort` upstream: eta's effort
 * is part of the model id (spec §2.1). Client tool loops per key are counted in `tool_loops.ts`.
 */
import { applyFieldRules, compileFieldTable } from "../field_rules.ts";
import { type FamilyPolicy, plainPolicy } from "../policy.ts";
import { DELTA_FIELDS } from "./field_rules.ts";
import {
  checkDeltaRequest,
  checkRawTools,
  refuseHostedItems,
  refuseUnsupportedResults,
} from "./request_rules.ts";
import { modelBeforeContent, modelInStream, modelOfAnswer, outputLimitOfAnswer } from "./run_checks.ts";
import type { ToolLoops } from "./tool_loops.ts";
import { deltaUpstreamModel } from "./upstream_model.ts";

const FIELDS = compileFieldTable(DELTA_FIELDS);

/** Gamma/eta's policy over one gateway's tool loops. */
export const deltaPolicy = (loops: ToolLoops): FamilyPolicy =>
  plainPolicy({
    protocol: "openai_responses",
    urlVar: "DELTA_UPSTREAM_URL",
    keysVar: "DELTA_UPSTREAM_KEY",
    simulatorAccounts: 1,
  }, {
    unavailable: "delta_unavailable",
    serverError: "delta_upstream_error",
    inStream: "delta_upstream_error",
    rateLimited: "standard_capacity_saturated",
    timedOut: "upstream_timeout",
    invalidResponse: "delta_upstream_error",
    streamBroken: "delta_upstream_error",
    caps: {
      hourly_reserve_limit: "delta_hourly_reserve_limit",
      daily_reserve_limit: "delta_daily_reserve_limit",
      hourly_spend_limit: "delta_hourly_spend_limit",
      daily_spend_limit: "delta_daily_spend_limit",
    },
  }, {
    rawBody(model, surface, body) {
      const ruled = applyFieldRules(FIELDS, model, surface, body);
      if (surface === "openai_responses") refuseHostedItems(ruled);
      checkRawTools(surface, ruled);
      refuseUnsupportedResults(surface, ruled);
      return ruled;
    },
    request: checkDeltaRequest,
    // Client tool loops per key (spec §7.5 delta_key_pause_limit): one store read here, one write after the answer.
    admitRequest: (a) => loops.admit(a),
    upstreamModel: deltaUpstreamModel,
    // Run limits and upstream failures (spec §7.5, `run_checks.ts`): the run deadline, another model answering
    // (free before the 200, the error frame after), the provider's output limit on a JSON answer (billed).
    runLimit: (config) => ({ ms: config.DELTA_RUN_TIMEOUT_MS, code: "delta_run_timeout" }),
    beforeContent: modelBeforeContent,
    inspect: modelInStream,
    answered: modelOfAnswer,
    answerFailed: outputLimitOfAnswer,
  });
