/**
 * The dashboard's pages over HTTP: the overview's money equal to the admin key view's (a request in
 * flight included) and its spend to the rows', the theta switch and the next theta request, the requests table
 * paged to its end and filtered, the usage charts' buckets, and a session on the Postgres store shared by two
 * gateways. Sign-in, CSRF and headers: dashboard_test.ts.
 */
import assert from "node:assert/strict";
import { REQUESTS_PAGE_SIZE } from "../../src/dashboard/requests_page.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { attrs, DashboardClient, testid } from "../support/dashboard_client.ts";
import {
  ANTHROPIC_HEADERS,
  post,
  startTestGateway,
  type TestGateway,
  withGateway,
} from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import { usageRows } from "../support/usage_rows.ts";

const HOUR = 3_600_000;

/** One request; `text` may carry simulator directives. Returns the status (the body is read). */
async function spend(
  t: TestGateway,
  key: string,
  model: string,
  opts: { stream?: boolean; text?: string } = {},
): Promise<number> {
  const path = model.startsWith("theta") ? "/theta/v1/chat/completions" : "/v1/chat/completions";
  const res = await post(t.url + path, key, {
    model,
    max_tokens: 50,
    ...(opts.stream ? { stream: true } : {}),
    messages: [{ role: "user", content: `${opts.text ?? ""} [[sim:words=5]]` }],
  });
  await res.text();
  return res.status;
}

async function signedIn(t: TestGateway, key: string): Promise<DashboardClient> {
  const c = new DashboardClient(t.url);
  assert.equal((await c.signIn(key)).status, 303);
  return c;
}

const sum = (rows: Record<string, any>[]) =>
  formatUsd(rows.reduce((s, r) => s + parseUsd(r.charged_usd), 0n));

/** Waits out the last seconds of a UTC hour, so a test's requests and pages share one hour (and day). */
async function awayFromHourEnd(): Promise<void> {
  const left = HOUR - (Date.now() % HOUR);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 100));
}

Deno.test("dashboard overview: balance and held are the admin key view's, a request in flight included; spent this hour and today are the rows'; caps read-only", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const { id, key } = await t.newKey("7.00");
    for (const m of ["k3", "theta3.7-plus", "k3"]) assert.equal(await spend(t, key, m), 200);
    await t.admin("POST", `/admin/keys/${id}/caps`, { hourly_spend_usd: "2.50", daily_reserve_usd: "9.00" });
    const c = await signedIn(t, key);

    // A request waits in the simulator, holding its reserve: both views show the same hold.
    const slow = post(t.url + "/v1/chat/completions", key, {
      model: "k3",
      max_tokens: 50,
      messages: [{ role: "user", content: "[[sim:delay=1500]] [[sim:words=5]]" }],
    });
    let view: any;
    for (let i = 0; i < 100; i++) {
      view = (await t.admin("GET", `/admin/keys/${id}`)).json;
      if (view.held_usd !== "0.00") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.notEqual(view.held_usd, "0.00", "the slow request holds its reserve");
    const page = (await c.get("/dashboard")).html;
    assert.equal(testid(page, "balance"), view.balance_usd);
    assert.equal(testid(page, "held"), view.held_usd);
    await (await slow).text();

    const rows = await usageRows(t, key);
    const after = (await c.get("/dashboard")).html;
    view = (await t.admin("GET", `/admin/keys/${id}`)).json;
    assert.equal(testid(after, "balance"), view.balance_usd);
    assert.equal(testid(after, "held"), "0.00");
    assert.equal(testid(after, "spent-hour"), sum(rows));
    assert.equal(testid(after, "spent-day"), sum(rows));
    assert.equal(view.spent_usd, sum(rows));
    assert.match(after, /лимит \$2\.50/);
    assert.match(after, /Резерв за сутки<\/th>\s*<td>\$9\.00<\/td>/);
    assert.match(after, /Лимиты задаются в боте/);
    assert.ok(
      !/name="hourly_spend_usd"|action="\/dashboard\/caps"/.test(after),
      "caps cannot be changed here",
    );
    assert.deepEqual(
      [attrs(after, "key-state")["data-state"], attrs(after, "key-state")["data-theta-paused"]],
      ["active", "false"],
    );
  }));

Deno.test("dashboard theta switch: paused from the page, the key's next theta request is 403 api_key_paused; resumed, it is served", () =>
  withGateway(async (t) => {
    const { id, key } = await t.newKey("5.00");
    const c = await signedIn(t, key);
    const toggle = async () => {
      const page = (await c.get("/dashboard")).html;
      const paused = /name="paused" value="(true|false)"/.exec(page)![1]!;
      const a = await c.post("/dashboard/theta", {
        csrf: DashboardClient.csrf(page, "/dashboard/theta"),
        paused,
      });
      assert.equal(a.status, 303);
      assert.equal(a.headers.get("location"), "/dashboard");
      return attrs((await c.get("/dashboard")).html, "key-state")["data-theta-paused"];
    };
    assert.equal(await toggle(), "true");
    assert.equal((await t.admin("GET", `/admin/keys/${id}`)).json.theta.paused, true);
    const refused = await post(t.url + "/theta/v1/messages", key, {
      model: "theta3.7-plus",
      max_tokens: 20,
      messages: [{ role: "user", content: "Привет" }],
    }, ANTHROPIC_HEADERS);
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error.code, "api_key_paused");
    assert.equal(await spend(t, key, "k3"), 200, "only theta is paused");
    assert.equal(await toggle(), "false");
    assert.equal(await spend(t, key, "theta3.7-plus"), 200);

    const page = (await c.get("/dashboard")).html;
    const csrf = DashboardClient.csrf(page, "/dashboard/theta");
    const bad = await c.post("/dashboard/theta", { csrf, paused: "yes" });
    assert.equal(bad.status, 400);
    assert.equal(attrs(bad.html, "error")["data-error-code"], "invalid_request");
    assert.equal((await t.admin("GET", `/admin/keys/${id}`)).json.theta.paused, false);
  }));

/** The request ids of a requests page, and its next-page link (undefined on the last page). */
function table(html: string): { ids: string[]; next: string | undefined } {
  assert.match(html, /data-testid="requests-table"/);
  const ids = [...html.matchAll(/data-testid="request-row" data-request-id="([^"]+)"/g)].map((m) => m[1]!);
  const next = /data-testid="next-page"\s+href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
  return { ids, next };
}

async function pageThrough(c: DashboardClient, first: string): Promise<string[][]> {
  const pages: string[][] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const a = await c.get(path);
    assert.equal(a.status, 200, a.html);
    const { ids, next } = table(a.html);
    pages.push(ids);
    if (next !== undefined) assert.equal(ids.length, REQUESTS_PAGE_SIZE, "a page with a next page is full");
    path = next;
  }
  return pages;
}

Deno.test("dashboard requests: newest first, paged to the end with every row once; filters by family, model, surface, status and stream", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("20.00");
    const other = await t.newKey("5.00");
    assert.equal(await spend(t, key, "theta3.7-plus"), 200);
    assert.equal(await spend(t, key, "k3", { stream: true }), 200);
    assert.equal(await spend(t, key, "k3", { stream: true, text: "[[sim:fault=error_mid]]" }), 200);
    const beta = await post(t.url + "/v1/messages", key, {
      model: "beta-haiku-4-5",
      max_tokens: 30,
      messages: [{ role: "user", content: "Привет [[sim:words=3]]" }],
    }, ANTHROPIC_HEADERS);
    await beta.text();
    for (let i = 4; i < REQUESTS_PAGE_SIZE + 2; i++) assert.equal(await spend(t, key, "k3"), 200);
    assert.equal(await spend(t, other.key, "k3"), 200);
    const rows = await usageRows(t, key);
    assert.equal(rows.length, REQUESTS_PAGE_SIZE + 2, "one row per request");
    const c = await signedIn(t, key);

    const pages = await pageThrough(c, "/dashboard/requests");
    assert.equal(pages.length, 2);
    assert.deepEqual(
      pages.flat(),
      rows.map((r) => r.request_id),
      "newest first, every row once, no other key's",
    );

    const first = (await c.get("/dashboard/requests")).html;
    const row = rows[0]!;
    const tr = first.slice(first.indexOf(`data-request-id="${row.request_id}"`));
    const cells = tr.slice(0, tr.indexOf("</tr>"));
    for (
      const want of [`$${row.reserved_usd}`, `$${row.charged_usd}`, row.endpoint, row.request_id, "успешно"]
    ) {
      assert.ok(cells.includes(want), `the row shows ${want}`);
    }

    const ids = (pred: (r: any) => boolean) => rows.filter(pred).map((r) => r.request_id);
    const filters: [string, (r: any) => boolean][] = [
      ["family=theta", (r) => r.family === "theta"],
      ["family=beta&model=beta-haiku-4-5", (r) => r.model === "beta-haiku-4-5"],
      ["model=k3&stream=true", (r) => r.model === "k3" && r.stream],
      ["status=error", (r) => r.status === "error"],
      ["stream=false&surface=%2Fv1%2Fmessages", (r) => r.endpoint === "/v1/messages"],
      ["surface=%2Ftheta%2Fv1%2Fchat%2Fcompletions", (r) => r.endpoint === "/theta/v1/chat/completions"],
      ["family=&model=&surface=&status=&stream=", () => true], // the form's "все"
      ["family=eta", () => false],
    ];
    for (const [q, pred] of filters) {
      const got = (await pageThrough(c, `/dashboard/requests?${q}`)).flat();
      assert.deepEqual(got, ids(pred), q);
    }
    assert.equal(ids((r) => r.status === "error").length, 1);

    // A cursor is bound to its filters and to its session.
    const next = table(first).next!;
    const cursor = new URL(next, t.url).searchParams.get("cursor")!;
    const err = (
      a: { status: number; html: string },
    ) => [a.status, attrs(a.html, "error")["data-error-code"]];
    assert.deepEqual(err(await c.get(`/dashboard/requests?family=alpha&cursor=${cursor}`)), [
      400,
      "invalid_cursor",
    ]);
    const again = await signedIn(t, key);
    assert.deepEqual(err(await again.get(next)), [400, "invalid_cursor"]);
    assert.equal((await c.get(next)).status, 200);
    for (
      const q of [
        "family=zeta",
        "status=done",
        "stream=yes",
        "surface=%2Fv1%2Ffiles",
        "model=a%20b",
        "limit=5",
      ]
    ) {
      assert.deepEqual(err(await c.get(`/dashboard/requests?${q}`)), [422, "validation_error"], q);
    }
  }));

Deno.test("dashboard usage: 30 daily and 48 hourly points ending now, the current one the rows' sum per family/model; the table", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const { key } = await t.newKey("5.00");
    for (const m of ["k3", "theta3.7-plus", "k3"]) assert.equal(await spend(t, key, m), 200);
    const rows = await usageRows(t, key);
    const c = await signedIn(t, key);
    for (const [range, count, label] of [["days", 30, 10], ["hours", 48, 13]] as const) {
      const html = (await c.get(`/dashboard/usage?range=${range}`)).html;
      assert.equal(attrs(html, "usage-chart")["data-range"], range);
      const points = [...html.matchAll(/<g\s+data-testid="chart-point"([^>]*)>([\s\S]*?)<\/g>/g)].map((
        m,
      ) => ({
        bucket: /data-bucket="([^"]+)"/.exec(m[1]!)![1]!,
        charged: /data-charged-usd="([^"]+)"/.exec(m[1]!)![1]!,
        tokens: Number(/data-tokens="([^"]+)"/.exec(m[1]!)![1]!),
        series: [...m[2]!.matchAll(/data-series="([^"]+)"/g)].map((s) => s[1]!),
      }));
      assert.equal(points.length, count, range);
      const now = new Date().toISOString().slice(0, label);
      assert.equal(points.at(-1)!.bucket, now);
      const step = range === "days" ? 24 * HOUR : HOUR;
      assert.equal(
        Date.parse(points[0]!.bucket.padEnd(13, "T00") + ":00:00Z"),
        Date.parse(now.padEnd(13, "T00") + ":00:00Z") - (count - 1) * step,
      );
      assert.deepEqual(points.at(-1)!.series, ["alpha/k3", "theta/theta3.7-plus"]);
      assert.equal(points.at(-1)!.charged, sum(rows));
      assert.ok(points.at(-1)!.tokens > 0);
      for (const p of points.slice(0, -1)) assert.deepEqual([p.charged, p.tokens, p.series], ["0.00", 0, []]);
      assert.match(html, /data-testid="tokens-chart"/);
      const k3 = rows.filter((r) => r.model === "k3");
      assert.match(html, new RegExp(`<td>alpha</td>\\s*<td>k3</td>\\s*<td class="num">${k3.length}</td>`));
      assert.ok(html.includes(`$${sum(rows)}</td>`), "the table's total");
    }
    const empty = await signedIn(t, (await t.newKey("1.00")).key);
    const none = (await empty.get("/dashboard/usage")).html;
    assert.equal([...none.matchAll(/data-testid="chart-point"/g)].length, 30);
    assert.ok(!none.includes("data-series="), "no bars without usage");
    assert.match(none, /Запросов за период не было/);
  }));

pgGatewayTest(
  "dashboard on Postgres: a session made on one gateway works on another; a sign-out on either ends it on both; the spend as the shared windows count it",
  async (env) => {
    const a = await startTestGateway(env);
    const b = await startTestGateway(env);
    try {
      const { id, key } = await a.newKey("5.00");
      assert.equal(await spend(a, key, "k3"), 200);
      assert.equal(await spend(b, key, "k3"), 200);
      // Each gateway's settlements reach the store with its group commit: reading its usage report flushes them.
      await usageRows(b, key);
      const rows = await usageRows(a, key);
      assert.equal(rows.length, 2);
      const onA = await signedIn(a, key);
      const onB = new DashboardClient(b.url);
      onB.jar.set("gw_session", onA.jar.get("gw_session")!);
      const page = (await onB.get("/dashboard")).html;
      const view = (await b.admin("GET", `/admin/keys/${id}`)).json;
      assert.equal(testid(page, "balance"), view.balance_usd);
      assert.equal(testid(page, "spent-day"), sum(rows), "both gateways' spend");
      assert.equal(testid((await onA.get("/dashboard")).html, "spent-day"), sum(rows));
      // Theta paused on B's page; A refuses the key's next theta request once it has read the change.
      const csrf = DashboardClient.csrf(page, "/dashboard/theta");
      assert.equal((await onB.post("/dashboard/theta", { csrf, paused: "true" })).status, 303);
      assert.equal((await b.admin("GET", `/admin/keys/${id}`)).json.theta.paused, true);
      let seen = false; // A reads other processes' key changes every KEY_REFRESH_MS (1 s)
      for (let i = 0; i < 100 && !seen; i++) {
        seen = (await a.admin("GET", `/admin/keys/${id}`)).json.theta.paused;
        if (!seen) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(seen, "A sees the pause");
      assert.equal(await spend(a, key, "theta3.7-plus"), 403);
      assert.equal((await onB.post("/dashboard/logout", { csrf })).status, 303);
      const home = (await onA.get("/dashboard")).html;
      assert.equal(testid(home, "balance"), undefined, "signed out on A too");
      assert.match(home, /action="\/dashboard\/login"/);
    } finally {
      await b.close();
      await a.close();
    }
  },
);

Deno.test("dashboard requests: pages count against the key's read rate of the usage report (one bucket): 429 usage_rate_limit", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const c = await signedIn(t, key);
    for (let i = 0; i < 10; i++) assert.equal((await c.get("/dashboard/requests")).status, 200);
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${t.url}/v1/usage/requests`, { headers: { authorization: `Bearer ${key}` } });
      await res.body?.cancel();
      if (res.status === 429) break; // the bucket refills at 10/s while the loop runs
    }
    let limited;
    for (let i = 0; i < 10 && limited?.status !== 429; i++) limited = await c.get("/dashboard/requests");
    assert.equal(limited!.status, 429);
    assert.equal(attrs(limited!.html, "error")["data-error-code"], "usage_rate_limit");
    assert.match(limited!.headers.get("retry-after")!, /^[1-9]\d*$/);
    assert.equal((await c.get("/dashboard")).status, 200, "the overview is not a read of rows");
  }));
