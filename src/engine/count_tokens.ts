/** POST /v1/messages/count_tokens (spec §4.7): local estimate, no upstream call, free, plus a pre-flight quote. */
import type { App } from "../app.ts";
import { DEFAULT_RESERVE_OUTPUT_TOKENS, reserveAmount } from "../billing/price.ts";
import { jsonResponse } from "../request/json.ts";
import type { KeyContext } from "../request/context.ts";
import { formatUsd } from "../money/usd.ts";
import { admit, inputEstimate, type SurfaceRoute } from "./generate.ts";

export async function countTokens(app: App, ctx: KeyContext, route: SurfaceRoute): Promise<Response> {
  const { account, model, policy, ...admitted } = await admit(app, ctx, route);
  // The family's field rules as on generation: a body count_tokens quotes is one generation would accept.
  const body = policy.rawBody(model, route.surface, admitted.body);
  const inputTokens = inputEstimate(body, policy.serverPrompt?.(model, app.config));
  const budget =
    typeof body.max_tokens === "number" && Number.isInteger(body.max_tokens) && body.max_tokens > 0
      ? body.max_tokens
      : Math.min(DEFAULT_RESERVE_OUTPUT_TOKENS, model.maxOutputTokens);
  const rates = app.tariff.rates(model.id, inputTokens);
  const member = account.rec.membership === "private";
  const quote = rates && {
    reserve_usd: formatUsd(
      reserveAmount(rates, inputTokens, budget, member, policy.searchBudget?.(route.surface, body) ?? 0),
    ),
    output_budget_tokens: budget,
    rates_usd_per_million: {
      input: formatUsd(rates.input * 1_000_000n),
      cache_read: formatUsd(rates.cacheRead * 1_000_000n),
      output: formatUsd(rates.output * 1_000_000n),
    },
    membership_discount: member && rates.memberDiscount,
  };
  return jsonResponse(200, { input_tokens: inputTokens, quote }, ctx.requestId, {
    "x-relay-usage-source": "estimated",
  });
}
