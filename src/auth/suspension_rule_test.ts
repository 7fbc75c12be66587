import assert from "node:assert/strict";
import type { Account, Accounts } from "../accounts/accounts.ts";
import { newAccount } from "../accounts/account.ts";
import { keyRecord } from "../store/testing/test_fixtures.ts";
import { Logger } from "../util/log.ts";
import { isBadInput, SuspensionRule } from "./suspension_rule.ts";

const CONFIG = { SUSPEND_BAD_REQUESTS: 2, SUSPEND_WINDOW_MS: 60_000, SUSPEND_FOR_MS: 600_000 };

/** Accounts whose `suspend` is recorded and applied to the one account. */
function fakeAccounts(acc: Account) {
  const calls: (number | null)[] = [];
  const accounts = {
    suspend(_id: string, until: number | null) {
      calls.push(until);
      acc.rec.suspendedUntil = until;
      return Promise.resolve(acc);
    },
  } as unknown as Accounts;
  return { accounts, calls };
}

Deno.test("isBadInput: 400s about the request count; a model's refusal, money, rate, 404, 413 and 422 do not", () => {
  for (
    const code of [
      "invalid_json",
      "invalid_parameter",
      "model_required",
      "delta_parameter_unavailable",
    ] as const
  ) {
    assert.equal(isBadInput(code), true, code);
  }
  for (
    const code of [
      "cyber_refusal",
      "insufficient_credit",
      "hourly_spend_limit",
      "client_key_rate_limit",
      "model_not_found",
      "request_body_too_large",
      "validation_error",
      "internal_error",
    ] as const
  ) assert.equal(isBadInput(code), false, code);
});

Deno.test("SuspensionRule: the refusal beyond the burst suspends through Accounts.suspend, for SUSPEND_FOR_MS", async () => {
  const acc = newAccount(keyRecord("key_1"));
  const { accounts, calls } = fakeAccounts(acc);
  const rule = new SuspensionRule(CONFIG, accounts, new Logger("error", () => {}));
  const now = 1_700_000_000_000;
  await rule.refused(acc, "invalid_json", now);
  await rule.refused(acc, "internal_error", now); // not counted
  await rule.refused(acc, "invalid_json", now);
  assert.deepEqual(calls, []);
  await rule.refused(acc, "invalid_json", now);
  assert.deepEqual(calls, [now + 600_000]);
});

Deno.test("SuspensionRule never shortens a longer suspension already set (the operator's, racing the rule)", async () => {
  const acc = newAccount(keyRecord("key_1"));
  const now = 1_700_000_000_000;
  acc.rec.suspendedUntil = now + 86_400_000;
  const { accounts, calls } = fakeAccounts(acc);
  const rule = new SuspensionRule(CONFIG, accounts, new Logger("error", () => {}));
  for (let i = 0; i < 5; i++) await rule.refused(acc, "invalid_json", now);
  assert.deepEqual(calls, []);
  assert.equal(acc.rec.suspendedUntil, now + 86_400_000);
});
