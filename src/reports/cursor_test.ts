import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { fromB64Url, toB64Url } from "../util/base64url.ts";
import { CursorSigner } from "./cursor.ts";

async function rejects(p: Promise<unknown>) {
  await assert.rejects(
    p,
    (e) => e instanceof GatewayError && e.code === "invalid_cursor" && e.param === "cursor",
  );
}

Deno.test("cursor: round trip, bound to key, filters and signer; every single-character edit fails", async () => {
  const s = new CursorSigner();
  const c = await s.sign("key_a", '["alpha",null,null,null]', { after: "IYAAAAAAAAAA" });
  assert.deepEqual(await s.verify(c, "key_a", '["alpha",null,null,null]'), { after: "IYAAAAAAAAAA" });
  await rejects(s.verify(c, "key_b", '["alpha",null,null,null]'));
  await rejects(s.verify(c, "key_a", "[null,null,null,null]"));
  await rejects(new CursorSigner().verify(c, "key_a", '["alpha",null,null,null]'));
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
  for (let i = 0; i < c.length; i++) {
    const other = alphabet[(alphabet.indexOf(c[i]!) + 1) % alphabet.length]!;
    await rejects(s.verify(c.slice(0, i) + other + c.slice(i + 1), "key_a", '["alpha",null,null,null]'));
  }
  for (const junk of ["", ".", "a.b", "x".repeat(5000), `${c}.`, c.slice(0, -2)]) {
    await rejects(s.verify(junk, "key_a", '["alpha",null,null,null]'));
  }
});

Deno.test("cursor: a validly signed payload of the wrong shape is still rejected", async () => {
  const secret = new Uint8Array(32);
  const s = new CursorSigner(secret);
  const good = await s.sign("k", "f", { after: null });
  assert.deepEqual(await s.verify(good, "k", "f"), { after: null });
  const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const forge = async (json: string) => {
    const payload = toB64Url(new TextEncoder().encode(json));
    const mac = await crypto.subtle.sign(
      "HMAC",
      key,
      new TextEncoder().encode(`usage-cursor/v1\nk\nf\n${payload}`),
    );
    return `${payload}.${toB64Url(new Uint8Array(mac))}`;
  };
  assert.deepEqual(await s.verify(await forge('{"a":"X"}'), "k", "f"), { after: "X" });
  for (const bad of ['{"a":5}', '{"a":""}', "null", "nope"]) {
    await rejects(s.verify(await forge(bad), "k", "f"));
  }
});

Deno.test("base64url: strict canonical decoding", () => {
  assert.deepEqual(fromB64Url(toB64Url(new Uint8Array([1, 2, 3, 250]))), new Uint8Array([1, 2, 3, 250]));
  assert.equal(fromB64Url("AQID+g"), null);
  assert.equal(fromB64Url("AQIE+"), null);
  assert.equal(fromB64Url("AR"), null, "non-zero padding bits");
});
