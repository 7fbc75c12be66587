import assert from "node:assert/strict";
import { type Callback, decodeCallback, encodeCallback } from "./callback_data.ts";

const KEY = "key_0123456789abcdef0123";

Deno.test("callback data: every action round-trips and fits Telegram's 64 bytes", () => {
  const all: Callback[] = [
    { a: "buy" },
    { a: "pkg", pkg: "pkg_abc" },
    { a: "pkgkey", pkg: "pkg_abc", key: KEY },
    { a: "pay", pkg: "pkg_0123456789abcdef0123", key: KEY, method: "stars" },
    { a: "pay", pkg: "pkg_abc", key: null, method: "manual" },
    { a: "rotate", key: KEY },
    { a: "rotate_yes", key: KEY },
    { a: "revoke", key: KEY },
    { a: "revoke_yes", key: KEY },
    { a: "cancel" },
    { a: "caps", key: KEY },
    { a: "cap_set", key: KEY, field: "daily_reserve_usd" },
    { a: "theta", key: KEY },
    { a: "theta_set", key: KEY, paused: true },
    { a: "theta_set", key: KEY, paused: false },
    { a: "alerts", key: KEY },
    { a: "alert_set", key: KEY },
  ];
  for (const cb of all) {
    const data = encodeCallback(cb);
    assert.ok(new TextEncoder().encode(data).length <= 64, data);
    assert.deepEqual(decodeCallback(data), cb);
  }
});

Deno.test("callback data: anything this bot did not send decodes to null", () => {
  for (
    const data of [
      "",
      "zz:1",
      "r",
      `r:${KEY}:extra`,
      "r:key with space",
      `r:${"a".repeat(41)}`,
      "cs:key_1:4",
      "cs:key_1:-1",
      "ts:key_1:yes",
      "m:pkg:-:", // empty method
      "p:-", // the no-key marker is a key's, in a payment only
      `p:${"x".repeat(70)}`,
      "r:key_1/../x",
    ]
  ) {
    assert.equal(decodeCallback(data), null, data);
  }
});

Deno.test("callback data: an id too long for 64 bytes is refused when encoding", () => {
  assert.throws(
    () => encodeCallback({ a: "pay", pkg: "p".repeat(40), key: "k".repeat(40), method: "stars" }),
    RangeError,
  );
});
