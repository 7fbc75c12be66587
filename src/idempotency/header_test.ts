/**
 * The Idempotency-Key header (header.ts): 1–255 visible ASCII characters pass as they are; empty, too long, a
 * space, a control character, DEL or a byte past ASCII is 400 invalid_request naming the header.
 */
import assert from "node:assert/strict";
import { idempotencyKey } from "./header.ts";
import { GatewayError } from "../errors/gateway_error.ts";

const withKey = (value: string) => new Headers({ "idempotency-key": value });

Deno.test("idempotencyKey: no header is no key", () => {
  assert.equal(idempotencyKey(new Headers({ "content-type": "application/json" })), undefined);
});

Deno.test("idempotencyKey: visible ASCII from 1 to exactly 255 characters is the key as sent", () => {
  const every = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("");
  for (const key of ["a", "order-1", every, "k".repeat(255), "~".repeat(254) + "!"]) {
    assert.equal(idempotencyKey(withKey(key)), key);
  }
  // Headers trims the value's outer whitespace before the gateway sees it: the key is what is left.
  assert.equal(idempotencyKey(withKey("  order-2\t")), "order-2");
});

Deno.test("idempotencyKey: empty, 256 characters, a space, a control, DEL or non-ASCII is 400 on the header", () => {
  const bad = [
    "",
    "k".repeat(256),
    "has space",
    "tab\tinside",
    "ctl\x01",
    "esc\x1b[0m",
    "del\x7f",
    "é",
    "ключ",
  ];
  for (const value of bad) {
    // "ключ" cannot be a header value at all (not a ByteString): the gateway gets its UTF-8 bytes as Latin-1.
    const headers = value === "ключ"
      ? withKey(String.fromCharCode(...new TextEncoder().encode(value)))
      : withKey(value);
    assert.throws(
      () => idempotencyKey(headers),
      (err: unknown) =>
        err instanceof GatewayError && err.code === "invalid_request" && err.param === "Idempotency-Key" &&
        err.status === 400,
      JSON.stringify(value),
    );
  }
});
