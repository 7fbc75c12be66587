import assert from "node:assert/strict";
import { ERROR_CODES } from "./codes.ts";
import { ALPHA_CODES } from "./codes_alpha.ts";
import { BOT_CODES } from "./codes_bot.ts";
import { COMMON_CODES } from "./codes_common.ts";
import { DASHBOARD_CODES } from "./codes_dashboard.ts";
import { DELTA_CODES } from "./codes_delta.ts";
import { SHOP_CODES } from "./codes_shop.ts";
import { THETA_CODES } from "./codes_theta.ts";

Deno.test("the error table: no code defined twice across sections", () => {
  const parts = [COMMON_CODES, ALPHA_CODES, DELTA_CODES, THETA_CODES, DASHBOARD_CODES, BOT_CODES, SHOP_CODES]
    .map((p) => Object.keys(p));
  const all = parts.flat();
  assert.equal(new Set(all).size, all.length, "a code stands in two section files");
  assert.equal(Object.keys(ERROR_CODES).length, all.length);
});

Deno.test("every code has a status, a class, and Russian message and action (spec §1.9)", () => {
  const statuses = new Set([
    400,
    401,
    402,
    403,
    404,
    405,
    409,
    410,
    413,
    414,
    415,
    422,
    429,
    431,
    500,
    502,
    503,
    504,
  ]);
  for (const [code, spec] of Object.entries(ERROR_CODES)) {
    assert.match(code, /^[a-z0-9_]+$/, code);
    assert.ok(statuses.has(spec.status), `${code}: ${spec.status}`);
    assert.match(spec.message, /[а-яё]/i, code);
    assert.match(spec.action, /[а-яё]/i, code);
    if (spec.status === 429 && code !== "api_key_suspended") {
      assert.equal(spec.type, "rate_limit_error", code);
    }
  }
  for (
    const code of [
      "queue_timeout",
      "provider_at_capacity",
      "theta_unavailable",
      "managed_service_unavailable",
    ]
  ) {
    assert.ok((ERROR_CODES as Record<string, { retryAfter?: number }>)[code]!.retryAfter! > 0, code);
  }
});
