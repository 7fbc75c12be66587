/**
 * The key holder's dashboard over HTTP: signing in and out, the session cookie's flags, CSRF refusal
 * on every form, the sign-in limit, the security headers on every answer under /dashboard, and the key kept
 * out of every answer and log line. Pages and their numbers: dashboard_pages_test.ts; in a browser:
 * dashboard_browser_test.ts.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, startTestGateway, type TestGateway, withGateway } from "../support/harness.ts";
import { attrs, DashboardClient, testid } from "../support/dashboard_client.ts";

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

function assertSecurityHeaders(headers: Headers, where: string) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    assert.equal(headers.get(name), value, `${where}: ${name}`);
  }
}

/** The HTML error page: the status, the code on the data-testid="error" element, the Russian message. */
function assertErrorPage(
  a: { status: number; headers: Headers; html: string },
  status: number,
  code: string,
) {
  assert.equal(a.status, status, a.html);
  assert.equal(a.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(attrs(a.html, "error")["data-error-code"], code);
  assert.match(a.html, /[а-яё]/i);
  assertSecurityHeaders(a.headers, `${status} ${code}`);
}

/** The session cookie's Set-Cookie value of an answer. */
const sessionCookie = (setCookies: string[]) => setCookies.find((c) => c.startsWith("gw_session="));

/** A well-formed key no key has. */
const unknownKey = () => `gd-${"A".repeat(42)}${Math.floor(Math.random() * 10)}`;

const keyView = async (t: TestGateway, id: string) => (await t.admin("GET", `/admin/keys/${id}`)).json;

Deno.test("dashboard: the sign-in form, then the key exchanged for a session cookie (HttpOnly, SameSite=Strict, Path, Max-Age, no Secure over http)", async () => {
  const lines: string[] = [];
  const t = await startTestGateway({ LOG_LEVEL: "info" }, { logSink: (l) => lines.push(l) });
  try {
    const { id, key } = await t.newKey("3.00");
    const c = new DashboardClient(t.url);
    const form = await c.get("/dashboard");
    assert.equal(form.status, 200);
    assert.equal(form.headers.get("content-type"), "text/html; charset=utf-8");
    assertSecurityHeaders(form.headers, "sign-in form");
    assert.match(form.html, /<html lang="ru">/);
    assert.match(form.html, /Вход в панель ключа/);
    assert.match(form.html, /<form method="post" action="\/dashboard\/login"/);
    assert.match(form.html, /name="key" type="password"/);
    const nonce = form.setCookies.find((s) => s.startsWith("gw_csrf="))!;
    assert.match(
      nonce,
      /^gw_csrf=[A-Za-z0-9_-]{43}; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    );
    assert.equal((await c.get("/dashboard")).setCookies.length, 0, "the browser's nonce is kept");

    const signed = await c.post("/dashboard/login", { csrf: DashboardClient.csrf(form.html), key });
    assert.equal(signed.status, 303, signed.html);
    assert.equal(signed.headers.get("location"), "/dashboard");
    assertSecurityHeaders(signed.headers, "the sign-in's redirect");
    const cookie = sessionCookie(signed.setCookies)!;
    assert.match(
      cookie,
      /^gw_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    );

    const overview = await c.get("/dashboard");
    assert.equal(overview.status, 200);
    assert.equal(testid(overview.html, "balance"), "3.00");
    assert.match(overview.html, /data-testid="logout"/);
    assert.ok(overview.html.includes((await keyView(t, id)).hint), "the key's hint is shown");

    // The key: in no answer, no header, no log line; the log names the key's id on the dashboard's lines.
    for (const a of [form, signed, overview]) {
      assert.ok(!a.html.includes(key) && ![...a.headers.values()].join("\n").includes(key));
    }
    await new Promise((r) => setTimeout(r, 50)); // log lines are written after their answers
    assert.ok(!lines.join("\n").includes(key), "the key is in no log line");
    const login = lines.map((l) => JSON.parse(l)).find((l) => l.route === "/dashboard/login");
    assert.equal(login.surface, "dashboard");
    assert.equal(login.status, 303);
    assert.equal(login.key_id, id);
  } finally {
    await t.close();
  }
});

Deno.test("dashboard: an unknown, malformed or revoked key gets the form again, 401, with the Russian reason; no session", () =>
  withGateway(async (t) => {
    const revoked = await t.newKey("1.00");
    await t.admin("POST", `/admin/keys/${revoked.id}/revoke`);
    for (
      const [key, code] of [
        [unknownKey(), "invalid_api_key"],
        ["not-a-key", "invalid_api_key"],
        ["", "invalid_api_key"],
        [revoked.key, "api_key_revoked"],
      ]
    ) {
      const c = new DashboardClient(t.url);
      const a = await c.signIn(key!);
      assert.equal(a.status, 401, key);
      assert.equal(attrs(a.html, "error")["data-error-code"], code);
      assert.match(a.html, /action="\/dashboard\/login"/, "the form again");
      assert.equal(sessionCookie(a.setCookies), undefined);
      if (key !== "") assert.ok(!a.html.includes(key!), "the key is not echoed back");
      assertSecurityHeaders(a.headers, code!);
      assert.ok(!c.jar.has("gw_session"));
    }
  }));

Deno.test("dashboard: an expired, suspended, paused or empty key signs in (its holder sees why it is refused)", () =>
  withGateway(async (t) => {
    const states: [string, string, unknown, string][] = [
      ["expire", "expired", { at: "2020-01-01T00:00:00Z" }, "expired"],
      ["suspend", "suspended", { until: "2999-01-01T00:00:00Z" }, "suspended"],
      ["theta", "paused", { paused: true }, "active"],
    ];
    for (const [action, name, body, state] of states) {
      const k = await t.newKey(action === "theta" ? "0.00" : "1.00");
      assert.equal((await t.admin("POST", `/admin/keys/${k.id}/${action}`, body)).status, 200);
      const c = new DashboardClient(t.url);
      assert.equal((await c.signIn(k.key)).status, 303, name);
      const a = attrs((await c.get("/dashboard")).html, "key-state");
      assert.equal(a["data-state"], state, name);
      assert.equal(a["data-theta-paused"], String(action === "theta"), name);
    }
  }));

Deno.test("dashboard: sign-in is limited per address — the 11th failure in a minute is 429 with Retry-After, for the right key too", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const c = new DashboardClient(t.url);
    for (let i = 0; i < 10; i++) assert.equal((await c.signIn(unknownKey())).status, 401, `failure ${i + 1}`);
    const limited = await c.signIn(unknownKey());
    assert.equal(limited.status, 429);
    assert.equal(attrs(limited.html, "error")["data-error-code"], "dashboard_login_rate_limit");
    assert.equal(limited.headers.get("retry-after"), "6", "a burst of 10, then one more every 6 s");
    assertSecurityHeaders(limited.headers, "429");
    const right = await c.signIn(key);
    assert.equal(right.status, 429, "while limited, the right key is refused too");
    assert.equal(sessionCookie(right.setCookies), undefined);
  }));

Deno.test("dashboard: the sign-in limit counts by client address (X-Forwarded-For through a trusted proxy), DASHBOARD_LOGIN_FAILURES_PER_MINUTE configures it", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const from = (ip: string) => new DashboardClient(t.url, { "x-forwarded-for": ip });
    const a = from("203.0.113.7");
    for (let i = 0; i < 3; i++) assert.equal((await a.signIn(unknownKey())).status, 401);
    const limited = await a.signIn(unknownKey());
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "20", "3 a minute: one more every 20 s");
    assert.equal((await from("203.0.113.8").signIn(key)).status, 303, "another address signs in");
  }, { DASHBOARD_LOGIN_FAILURES_PER_MINUTE: "3", TRUSTED_PROXIES: "127.0.0.1/32" }));

Deno.test("dashboard: Secure on the cookies when the request came over HTTPS through a trusted proxy; not on an untrusted peer's word", async () => {
  for (const [trusted, secure] of [["127.0.0.1/32", true], ["10.0.0.0/8", false]] as const) {
    await withGateway(async (t) => {
      const { key } = await t.newKey("1.00");
      const c = new DashboardClient(t.url, { "x-forwarded-proto": "https" });
      const form = await c.get("/dashboard");
      assert.equal(form.setCookies[0]!.endsWith("; Secure"), secure, `gw_csrf, proxies ${trusted}`);
      const signed = await c.post("/dashboard/login", { csrf: DashboardClient.csrf(form.html), key });
      assert.equal(sessionCookie(signed.setCookies)!.endsWith("; HttpOnly; SameSite=Strict; Secure"), secure);
      assert.equal(sessionCookie(signed.setCookies)!.includes("Secure"), secure);
    }, { TRUSTED_PROXIES: trusted });
  }
});

Deno.test("dashboard: CSRF — a missing or wrong field on each form is 403 csrf_failed and changes nothing", () =>
  withGateway(async (t) => {
    const { id, key } = await t.newKey("1.00");
    const other = await t.newKey("1.00");

    // Sign-in: no session is made.
    const c = new DashboardClient(t.url);
    await c.get("/dashboard");
    for (const fields of [{ key }, { key, csrf: "x" }, { key, csrf: "" }] as Record<string, string>[]) {
      const a = await c.post("/dashboard/login", fields);
      assertErrorPage(a, 403, "csrf_failed");
      assert.ok(!a.html.includes(key));
      assert.equal(sessionCookie(a.setCookies), undefined);
    }
    const stranger = new DashboardClient(t.url); // a valid field, but for another browser's nonce cookie
    const form = await stranger.get("/dashboard");
    assertErrorPage(
      await c.post("/dashboard/login", { csrf: DashboardClient.csrf(form.html), key }),
      403,
      "csrf_failed",
    );
    const cookieless = new DashboardClient(t.url);
    assertErrorPage(
      await cookieless.post("/dashboard/login", { csrf: DashboardClient.csrf(form.html), key }),
      403,
      "csrf_failed",
    );
    const asJson = await c.post("/dashboard/login", {}, { "content-type": "application/json" });
    assertErrorPage(asJson, 403, "csrf_failed");

    // Signed in: theta and sign-out refuse a missing field, a wrong one, and another session's.
    assert.equal((await c.signIn(key)).status, 303);
    const o = new DashboardClient(t.url);
    assert.equal((await o.signIn(other.key)).status, 303);
    const otherCsrf = DashboardClient.csrf((await o.get("/dashboard")).html, "/dashboard/theta");
    const page = (await c.get("/dashboard")).html;
    const mine = DashboardClient.csrf(page, "/dashboard/theta");
    assert.equal(DashboardClient.csrf(page, "/dashboard/logout"), mine);
    for (const csrf of [undefined, "", "wrong", mine.slice(0, -1), otherCsrf]) {
      const f: Record<string, string> = csrf === undefined ? {} : { csrf };
      assertErrorPage(await c.post("/dashboard/theta", { ...f, paused: "true" }), 403, "csrf_failed");
      assertErrorPage(await c.post("/dashboard/logout", f), 403, "csrf_failed");
    }
    assert.equal((await keyView(t, id)).theta.paused, false, "theta not paused");
    assert.equal(testid((await c.get("/dashboard")).html, "balance"), "1.00", "still signed in");
    // The right field works.
    assert.equal((await c.post("/dashboard/theta", { csrf: mine, paused: "true" })).status, 303);
    assert.equal((await keyView(t, id)).theta.paused, true);
  }));

Deno.test("dashboard: the security headers on every answer under /dashboard — pages, redirects, assets, errors", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const c = new DashboardClient(t.url);
    const anon = new DashboardClient(t.url);
    const check = (a: { headers: Headers }, where: string) => assertSecurityHeaders(a.headers, where);
    check(await anon.get("/dashboard"), "sign-in form");
    const usage = await anon.get("/dashboard/usage");
    assert.equal(usage.status, 303, "signed out: to the sign-in form");
    assert.equal(usage.headers.get("location"), "/dashboard");
    check(usage, "redirect to sign in");
    check(await c.signIn(key), "sign-in redirect");
    for (
      const path of ["/dashboard", "/dashboard/usage", "/dashboard/usage?range=hours", "/dashboard/requests"]
    ) {
      const a = await c.get(path);
      assert.equal(a.status, 200, path);
      check(a, path);
      assert.ok(!/<script>|<style|style="/.test(a.html), `${path}: no inline script or style`);
      assert.match(a.html, /<script src="\/dashboard\/assets\/dashboard\.js" defer><\/script>/);
    }
    for (
      const [path, type] of [["dashboard.css", "text/css"], ["dashboard.js", "text/javascript"]] as const
    ) {
      const a = await anon.get(`/dashboard/assets/${path}`);
      assert.equal(a.status, 200);
      assert.equal(a.headers.get("content-type"), `${type}; charset=utf-8`);
      assert.ok(a.html.length > 100);
      check(a, path);
    }
    assertErrorPage(await anon.get("/dashboard/assets/nope.js"), 404, "route_not_found");
    assertErrorPage(await anon.get("/dashboard/nope"), 404, "route_not_found");
    const wrongMethod = await anon.get("/dashboard/login");
    assertErrorPage(wrongMethod, 405, "method_not_allowed");
    assert.equal(wrongMethod.headers.get("allow"), "POST");
    assertErrorPage(await c.get("/dashboard/usage?range=weeks"), 422, "validation_error");
    assertErrorPage(await c.get("/dashboard/requests?cursor=abc"), 400, "invalid_cursor");
    const big = await c.post("/dashboard/login", { csrf: "x", key: "k".repeat(5000) });
    assertErrorPage(big, 413, "request_body_too_large");
    // Outside /dashboard, nothing changes.
    const models = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    await models.body?.cancel();
    assert.equal(models.headers.get("content-security-policy"), null);
    assert.equal((await fetch(`${t.url}/dashboards`)).headers.get("content-type"), "application/json");
  }));

Deno.test("dashboard: sign-out ends the session on the server — the old cookie no longer works", () =>
  withGateway(async (t) => {
    const { id, key } = await t.newKey("1.00");
    const c = new DashboardClient(t.url);
    await c.signIn(key);
    const old = c.jar.get("gw_session")!;
    const csrf = DashboardClient.csrf((await c.get("/dashboard")).html, "/dashboard/logout");
    const out = await c.post("/dashboard/logout", { csrf });
    assert.equal(out.status, 303);
    assert.equal(out.headers.get("location"), "/dashboard");
    assert.equal(
      sessionCookie(out.setCookies),
      "gw_session=; Path=/dashboard; Max-Age=0; HttpOnly; SameSite=Strict",
    );
    // A cookie the gateway never issued, of any shape, is no session.
    for (const forged of ["x", "A".repeat(43), old.slice(0, -1), `${old}A`, "%00", ""]) {
      const f = new DashboardClient(t.url);
      f.jar.set("gw_session", forged);
      assert.match((await f.get("/dashboard")).html, /action="\/dashboard\/login"/, forged);
    }
    // The old cookie replayed: signed out everywhere, and its forms change nothing.
    const replay = new DashboardClient(t.url);
    replay.jar.set("gw_session", old);
    const home = await replay.get("/dashboard");
    assert.equal(home.status, 200);
    assert.match(home.html, /action="\/dashboard\/login"/);
    assert.equal(testid(home.html, "balance"), undefined);
    for (const path of ["/dashboard/usage", "/dashboard/requests"]) {
      assert.equal((await replay.get(path)).headers.get("location"), "/dashboard", path);
    }
    const theta = await replay.post("/dashboard/theta", { csrf, paused: "true" });
    assert.equal(theta.status, 303, "no session: to the sign-in form, before any CSRF check");
    assert.equal((await keyView(t, id)).theta.paused, false);
  }));

Deno.test("dashboard: a session ends at DASHBOARD_SESSION_TTL_MS; a revoked key's session ends at once", () =>
  withGateway(async (t) => {
    const a = await t.newKey("1.00");
    const c = new DashboardClient(t.url);
    assert.match(sessionCookie((await c.signIn(a.key)).setCookies)!, /Max-Age=60;/);
    assert.equal(testid((await c.get("/dashboard")).html, "balance"), "1.00");
    const now = t.gw.app.now;
    t.gw.app.now = () => now() + 60_000; // the session's minute is over
    try {
      assert.equal(testid((await c.get("/dashboard")).html, "balance"), undefined);
    } finally {
      t.gw.app.now = now;
    }
    assert.equal(testid((await c.get("/dashboard")).html, "balance"), "1.00");
    await t.admin("POST", `/admin/keys/${a.id}/revoke`);
    assert.equal(testid((await c.get("/dashboard")).html, "balance"), undefined, "revoked: signed out");
  }, { DASHBOARD_SESSION_TTL_MS: "60000" }));

Deno.test("dashboard: a rotated key's sessions end at once; the new secret signs in", () =>
  withGateway(async (t) => {
    const a = await t.newKey("1.00");
    const c = new DashboardClient(t.url);
    await c.signIn(a.key);
    assert.equal(testid((await c.get("/dashboard")).html, "balance"), "1.00");
    const rotated = await t.gw.app.accounts.rotate(a.id);
    assert.ok(rotated);
    assert.equal(testid((await c.get("/dashboard")).html, "balance"), undefined, "rotated: signed out");
    const fresh = new DashboardClient(t.url);
    await fresh.signIn(rotated.key);
    assert.equal(testid((await fresh.get("/dashboard")).html, "balance"), "1.00");
  }));
