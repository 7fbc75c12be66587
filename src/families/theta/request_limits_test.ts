import assert from "node:assert/strict";
import type { GatewayError } from "../../errors/gateway_error.ts";
import { KvStore } from "../../store/kv_store.ts";
import { keyRecord } from "../../store/testing/test_fixtures.ts";
import type { KeyRecord } from "../../store/types.ts";
import type { RequestAdmission } from "../policy.ts";
import { admitThetaRequest } from "./request_limits.ts";

/** 2026-03-04 10:59:30 UTC: 30 s to the hour's end, 13 h 0 min 30 s to the day's. */
const T = Date.UTC(2026, 2, 4, 10, 59, 30);

async function setup() {
  const store = await KvStore.open(":memory:");
  const clock = { now: T };
  const admit = async (key: KeyRecord): Promise<GatewayError | "ok"> => {
    const a = {
      store,
      config: {} as never,
      keyId: key.id,
      key,
      requestId: "req",
      ir: {} as never,
      now: () => clock.now,
    } satisfies RequestAdmission;
    try {
      assert.equal(await admitThetaRequest(a), undefined);
      return "ok";
    } catch (err) {
      return err as GatewayError;
    }
  };
  return { store, clock, admit };
}

/** A key's theta settings with these limits (key_settings.ts). */
const limits = (hourlyRequests: number | null, dailyRequests: number | null = null) => ({
  families: { theta: { paused: false, hourlyRequests, dailyRequests } },
});

const verdict = (r: GatewayError | "ok") => r === "ok" ? "ok" : [r.code, r.retryAfter];

Deno.test("theta request limits: the hour's limit refuses with Retry-After to the hour's end; refusals do not count", async () => {
  const { store, clock, admit } = await setup();
  const key = keyRecord("key_a", limits(2, null));
  assert.deepEqual([verdict(await admit(key)), verdict(await admit(key))], ["ok", "ok"]);
  assert.deepEqual(verdict(await admit(key)), ["customer_hour_limit", 30]);
  clock.now = T + 29_001; // 0.999 s left: rounded up
  assert.deepEqual(verdict(await admit(key)), ["customer_hour_limit", 1]);
  // The refusals were not counted: one more under a limit of 3.
  const three = { ...key, ...limits(3) };
  assert.equal(verdict(await admit(three)), "ok");
  assert.deepEqual(verdict(await admit(three)), ["customer_hour_limit", 1]);
  clock.now = T + 30_000; // 11:00, a new hour
  assert.equal(verdict(await admit(key)), "ok");
  store.close();
});

Deno.test("theta request limits: the day's limit counts every hour of the UTC day; Retry-After to its end", async () => {
  const { store, clock, admit } = await setup();
  const key = keyRecord("key_a", limits(10, 3));
  for (let i = 0; i < 3; i++) assert.equal(verdict(await admit(key)), "ok");
  const err = await admit(key);
  assert.deepEqual(verdict(err), ["customer_day_limit", 13 * 3600 + 30]);
  assert.match((err as GatewayError).detail!, /3 запросов theta в сутки/);
  clock.now = T + 30_000; // the next hour, the same day
  assert.deepEqual(verdict(await admit(key)), ["customer_day_limit", 13 * 3600]);
  clock.now = Date.UTC(2026, 2, 5, 0, 0, 0);
  assert.equal(verdict(await admit(key)), "ok");
  store.close();
});

Deno.test("theta request limits: no limit admits and still counts; a limit of 0 admits none; keys count apart", async () => {
  const { store, admit } = await setup();
  const free = keyRecord("key_a");
  for (let i = 0; i < 4; i++) assert.equal(verdict(await admit(free)), "ok");
  // Set during the hour, a limit sees what the hour already served.
  assert.deepEqual(verdict(await admit({ ...free, ...limits(4) })), ["customer_hour_limit", 30]);
  assert.deepEqual(verdict(await admit({ ...free, ...limits(null, 4) })), [
    "customer_day_limit",
    13 * 3600 + 30,
  ]);
  assert.deepEqual(verdict(await admit(keyRecord("key_b", limits(0)))), [
    "customer_hour_limit",
    30,
  ]);
  assert.equal(verdict(await admit(keyRecord("key_c", limits(1)))), "ok");
  store.close();
});
