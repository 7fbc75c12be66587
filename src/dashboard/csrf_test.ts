import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { checkCsrf, csrfToken, isNonce, newNonce } from "./csrf.ts";

const refused = (p: Promise<void>) =>
  assert.rejects(p, (e) => e instanceof GatewayError && e.code === "csrf_failed" && e.status === 403);

Deno.test("csrf: the field is a one-way token of the cookie's secret; only that secret's token passes", async () => {
  const nonce = newNonce();
  assert.ok(isNonce(nonce));
  const token = await csrfToken(nonce);
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(await csrfToken(nonce), token, "the same for every process: no server secret");
  assert.ok(!token.includes(nonce));
  await checkCsrf(new URLSearchParams({ csrf: token }), nonce);
  await refused(checkCsrf(new URLSearchParams({ csrf: token }), newNonce()));
  await refused(checkCsrf(new URLSearchParams({ csrf: token }), undefined));
  await refused(checkCsrf(new URLSearchParams(), nonce));
  await refused(checkCsrf(new URLSearchParams({ csrf: "" }), nonce));
  await refused(checkCsrf(new URLSearchParams({ csrf: token.slice(1) }), nonce));
  for (const bad of [undefined, "", "short", `${nonce}=`, nonce.slice(1)]) assert.equal(isNonce(bad), false);
});
