import assert from "node:assert/strict";
import { readCookie, setCookie } from "./cookies.ts";

Deno.test("readCookie finds a cookie among others, the first of two with one name, none in a null header", () => {
  assert.equal(readCookie("a=1; gw_session=abc_-; b=2", "gw_session"), "abc_-");
  assert.equal(readCookie("gw_session=one;gw_session=two", "gw_session"), "one");
  assert.equal(readCookie("xgw_session=1; gw_session_x=2", "gw_session"), undefined);
  assert.equal(readCookie("novalue; gw_csrf=", "gw_csrf"), "");
  assert.equal(readCookie(null, "gw_session"), undefined);
});

Deno.test("setCookie is HttpOnly and SameSite=Strict, Secure only when asked", () => {
  assert.equal(
    setCookie("gw_session", "v", { path: "/dashboard", maxAgeSeconds: 43200, secure: false }),
    "gw_session=v; Path=/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict",
  );
  assert.equal(
    setCookie("gw_session", "", { path: "/dashboard", maxAgeSeconds: 0, secure: true }),
    "gw_session=; Path=/dashboard; Max-Age=0; HttpOnly; SameSite=Strict; Secure",
  );
});
