/** The dashboard's sign-in through a TLS proxy, shared by both proxies' tests: every cookie it sets is Secure. */
import assert from "node:assert/strict";
import { DashboardClient } from "../support/dashboard_client.ts";

/** Signs in with `key` at `base` (the proxy, over https, trusted by `client`); asserts the cookies. */
export async function assertSecureSignIn(base: string, key: string, client: Deno.HttpClient): Promise<void> {
  const form = await fetch(`${base}/dashboard`, { client });
  const formHtml = await form.text();
  assert.equal(form.status, 200, formHtml);
  const [csrfCookie] = form.headers.getSetCookie();
  assert.match(csrfCookie ?? "", /^gw_csrf=[^;]+; Path=\/dashboard; .*; Secure$/);
  const signedIn = await fetch(`${base}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    client,
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie!.split(";")[0]! },
    body: new URLSearchParams({ csrf: DashboardClient.csrf(formHtml), key }).toString(),
  });
  await signedIn.body?.cancel();
  assert.equal(signedIn.status, 303);
  const cookies = signedIn.headers.getSetCookie();
  assert.equal(cookies.length, 1, cookies.join("\n"));
  assert.match(cookies[0]!, /^gw_session=[^;]+; Path=\/dashboard; .*; SameSite=Strict; Secure$/);
}
