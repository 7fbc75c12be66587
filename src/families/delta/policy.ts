/**
 * Families gamma and eta (spec §4.6, §7.5) share one policy: the delta_ codes, including their own cap
 * codes and a provider 500 as `delta_upstream_error`. The closed parameter list arrives with their issue.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import { plainPolicy } from "../policy.ts";

export const deltaPolicy = plainPolicy({
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
  caps: {
    hourly_reserve_limit: "delta_hourly_reserve_limit",
    daily_reserve_limit: "delta_daily_reserve_limit",
    hourly_spend_limit: "delta_hourly_spend_limit",
    daily_spend_limit: "delta_daily_spend_limit",
  },
}, {
  // spec §2.1, §4.6: eta's effort is part of the model id and thinking has no effect, so an effort derived
  // from a Messages thinking budget or output_config must never reach the upstream as reasoning.effort.
  request(_model, ir) {
    // spec §4.6: built-in search runs on its own and typed server tools are not accepted.
    if (ir.hostedWebSearch) {
      throw new GatewayError("delta_parameter_unavailable", {
        param: ir.hostedWebSearch.param,
        detail: "Веб-поиск у gamma и eta встроен и не настраивается; уберите инструмент web_search.",
      });
    }
    delete ir.reasoningEffort;
    delete ir.thinkingBudget;
  },
});
