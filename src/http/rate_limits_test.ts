import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { parseCidrList } from "../util/ip.ts";
import { GcraLimiter } from "../util/rate_limiter.ts";
import { configuredLimit, requestLimits } from "./rate_limits.ts";

const T0 = 1_700_000_000_000;
const OFF = {
  KEY_RATE_LIMIT_RPS: 0,
  KEY_RATE_LIMIT_BURST: undefined,
  IP_RATE_LIMIT_RPS: 0,
  IP_RATE_LIMIT_BURST: undefined,
};

Deno.test("configured limit: 0 = off; an unset burst is one second's worth, at least 1", () => {
  assert.equal(configuredLimit(0, undefined), undefined);
  assert.equal(configuredLimit(0, 10), undefined);
  assert.equal(configuredLimit(5, 0), undefined);
  assert.deepEqual(configuredLimit(5, undefined), { ratePerSecond: 5, burst: 5 });
  assert.deepEqual(configuredLimit(2.5, undefined), { ratePerSecond: 2.5, burst: 3 });
  assert.deepEqual(configuredLimit(0.2, undefined), { ratePerSecond: 0.2, burst: 1 });
  assert.deepEqual(configuredLimit(5, 20), { ratePerSecond: 5, burst: 20 });
});

function refusal(fn: () => void): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error("not refused");
}

Deno.test("request limits: codes and Retry-After; off limits do nothing", () => {
  const limits = requestLimits({
    ...OFF,
    KEY_RATE_LIMIT_RPS: 0.5,
    KEY_RATE_LIMIT_BURST: 1,
    IP_RATE_LIMIT_RPS: 1,
    TRUSTED_PROXIES: [],
  });
  const h = new Headers();
  limits.admitAddress(h, "198.51.100.1", T0);
  const ip = refusal(() => limits.admitAddress(h, "198.51.100.1", T0));
  assert.equal(ip.code, "client_ip_rate_limit");
  assert.equal(ip.status, 429);
  assert.equal(ip.retryAfter, 1);
  limits.admitKey("key_a", T0);
  const key = refusal(() => limits.admitKey("key_a", T0 + 1));
  assert.equal(key.code, "client_key_rate_limit");
  assert.equal(key.retryAfter, 2, "1.999 s rounded up");
  const off = requestLimits({ ...OFF, TRUSTED_PROXIES: [] });
  for (let i = 0; i < 1000; i++) {
    off.admitAddress(h, "198.51.100.1", T0);
    off.admitKey("key_a", T0);
  }
});

Deno.test("request limits: a flood of distinct forwarded addresses keeps the address buckets bounded", () => {
  let made: GcraLimiter | undefined;
  const limits = requestLimits(
    { ...OFF, IP_RATE_LIMIT_RPS: 1, IP_RATE_LIMIT_BURST: 5, TRUSTED_PROXIES: parseCidrList("10.0.0.0/8") },
    (limit) => made = new GcraLimiter(limit, { maxEntries: 500 }),
  );
  for (let i = 0; i < 20_000; i++) {
    const h = new Headers({ "x-forwarded-for": `203.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
    limits.admitAddress(h, "10.0.0.1", T0 + i);
    assert.ok(made!.size <= 500);
  }
  // IPv6 clients count per /64, so a host rotating addresses inside its /64 is one bucket.
  for (let i = 0; i < 5; i++) {
    limits.admitAddress(
      new Headers({ "x-forwarded-for": `2001:db8:7:7::${i.toString(16)}` }),
      "10.0.0.1",
      T0,
    );
  }
  const h = new Headers({ "x-forwarded-for": "2001:db8:7:7:ffff::1" });
  assert.equal(refusal(() => limits.admitAddress(h, "10.0.0.1", T0)).code, "client_ip_rate_limit");
});
