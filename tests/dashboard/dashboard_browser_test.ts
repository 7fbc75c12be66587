/**
 * The key holder's dashboard in a real Chromium against a running gateway and simulator: sign in
 * through the form, the overview's money equal to the admin API's, the usage chart's 48 hourly and 30 daily
 * points equal to the usage rows summed per UTC bucket and per family/model, the requests table paged to the
 * end with no row twice, theta paused from the page (the next theta request refused 403 api_key_paused) and
 * resumed, sign-out (the old session refused); the overview and the requests table also with JavaScript off.
 * No step may log a console error or send a request off loopback. Screenshots: test-artifacts/dashboard/.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { REQUESTS_PAGE_SIZE } from "../../src/dashboard/requests_page.ts";
import {
  browserTest,
  SIGN_IN_KEY,
  signIn,
  submit,
  type WatchedPage,
  watchedPage,
} from "../support/browser.ts";
import { post, type TestGateway, withGateway } from "../support/harness.ts";
import { usageRows } from "../support/usage_rows.ts";

const ARTIFACTS = "test-artifacts/dashboard";
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const THETA_MODEL = "theta3.7-plus";
const FILTERS = 'form[action="/dashboard/requests"]';
/** A time the page's script has rewritten to local time (it keeps the UTC text as the title). */
const LOCAL_TIME_SHOWN = "time[data-local][title]";

/** One request through the simulator (theta through /theta/v1): its status and error code. */
async function spend(t: TestGateway, key: string, model: string): Promise<[number, string | undefined]> {
  const path = model.startsWith("theta") ? "/theta/v1/chat/completions" : "/v1/chat/completions";
  const res = await post(t.url + path, key, {
    model,
    max_tokens: 50,
    messages: [{ role: "user", content: "Сколько я потратил? [[sim:words=5]]" }],
  });
  const json = await res.json();
  return [res.status, json.error?.code];
}
const OK: [number, undefined] = [200, undefined];

/** A usage row as GET /v1/usage/requests gives it (tests/support/usage_rows.ts), the fields used here. */
interface Row {
  request_id: string;
  created_at: string;
  family: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  charged_usd: string;
}

/** UTC bucket names as the chart writes them: "YYYY-MM-DDTHH" (hours) or "YYYY-MM-DD" (days). */
const hourBucket = (ms: number) => new Date(ms).toISOString().slice(0, 13);
const dayBucket = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Charged USD, tokens (input + output, as the chart counts them) and family/model series of one bucket. */
function bucketOf(rows: Row[], bucket: string) {
  const inIt = rows.filter((r) => r.created_at.startsWith(bucket));
  return {
    charged: formatUsd(inIt.reduce((s, r) => s + parseUsd(r.charged_usd), 0n)),
    tokens: String(inIt.reduce((s, r) => s + r.input_tokens + r.output_tokens, 0)),
    series: [...new Set(inIt.map((r) => `${r.family}/${r.model}`))].sort(),
  };
}

const text = (page: Page, testid: string) => page.$eval(`[data-testid="${testid}"]`, (e) => e.textContent);

/**
 * The overview's money equals the admin key view's; `spent-hour`/`spent-day` the rows' charges in the UTC hour
 * and day the page was rendered in (bracketed by `before`..now, so an hour's end between them is no flake).
 */
async function assertOverview(t: TestGateway, page: Page, keyId: string, rows: Row[], before: number) {
  const { json: view } = await t.admin("GET", `/admin/keys/${keyId}`);
  assert.equal(await text(page, "balance"), view.balance_usd);
  assert.equal(await text(page, "held"), view.held_usd);
  const now = Date.now();
  const hours = [...new Set([before, now].map(hourBucket))].map((b) => bucketOf(rows, b).charged);
  const days = [...new Set([before, now].map(dayBucket))].map((b) => bucketOf(rows, b).charged);
  assert.ok(hours.includes((await text(page, "spent-hour"))!), `spent-hour not in ${hours}`);
  assert.ok(days.includes((await text(page, "spent-day"))!), `spent-day not in ${days}`);
}

async function keyState(page: Page) {
  return await page.$eval(
    '[data-testid="key-state"]',
    (e) => [e.getAttribute("data-state"), e.getAttribute("data-theta-paused")],
  );
}

/** The chart's points in order: bucket, charged, the rect series. */
function chartPoints(page: Page) {
  return page.$$eval('svg[data-testid="usage-chart"] [data-testid="chart-point"]', (gs) =>
    gs.map((g) => ({
      bucket: g.getAttribute("data-bucket")!,
      charged: g.getAttribute("data-charged-usd")!,
      tokens: g.getAttribute("data-tokens")!,
      series: [...g.querySelectorAll("rect[data-series]")].map((r) => r.getAttribute("data-series")!).sort(),
    })));
}

/**
 * `range` shows `count` consecutive buckets ending with the current one (the render fell in `before`..now),
 * each with the rows' charge and series for that bucket.
 */
async function assertChart(page: Page, rows: Row[], range: "hours" | "days", before: number) {
  const [count, step, name] = range === "hours" ? [48, HOUR_MS, hourBucket] : [30, DAY_MS, dayBucket];
  assert.equal(
    await page.$eval(
      '[data-testid="usage-chart"]',
      (e) => [e.tagName.toLowerCase(), e.getAttribute("data-range")].join(" "),
    ),
    `svg ${range}`,
  );
  const points = await chartPoints(page);
  assert.equal(points.length, count);
  const last = points.at(-1)!.bucket!;
  assert.ok([name(before), name(Date.now())].includes(last), `the last ${range} point is ${last}`);
  const lastStart = Date.parse(range === "hours" ? `${last}:00:00Z` : `${last}T00:00:00Z`);
  points.forEach((p, i) => {
    const bucket = name(lastStart - (count - 1 - i) * step);
    const want = bucketOf(rows, bucket);
    assert.deepEqual(p, { bucket, ...want }, `${range} point ${i}`);
  });
}

/** The request ids of the table on the page; asserts there is one. */
function tableIds(page: Page): Promise<string[]> {
  return page.$$eval(
    '[data-testid="requests-table"] [data-testid="request-row"]',
    (trs) => trs.map((tr) => tr.getAttribute("data-request-id")!),
  );
}

/** Pages through the requests table from the current page; returns every id seen, in order. */
async function pageThrough(w: WatchedPage): Promise<string[][]> {
  const pages = [await tableIds(w.page)];
  while (await w.page.$('[data-testid="next-page"]')) {
    assert.equal(pages.at(-1)!.length, REQUESTS_PAGE_SIZE, "a page with a next page is full");
    await submit(w.page, () => w.page.click('[data-testid="next-page"]'));
    await w.shot(`requests-page-${pages.length + 1}`);
    pages.push(await tableIds(w.page));
  }
  return pages;
}

function assertAllOnce(pages: string[][], rows: Row[]) {
  const seen = pages.flat();
  assert.equal(new Set(seen).size, seen.length, "no row twice");
  assert.deepEqual([...seen].sort(), rows.map((r) => r.request_id).sort());
  assert.equal(pages.length, Math.ceil(rows.length / REQUESTS_PAGE_SIZE));
}

browserTest(
  "dashboard in Chromium: sign in, money, charts, requests, theta, sign out",
  ARTIFACTS,
  (t, browser) =>
    withGateway(async (gw) => {
      const k = await gw.newKey("20.00");
      // Usage on two models (two series in the current hour), then enough to need a second table page.
      const started = Date.now();
      const models = ["k3", "k3", THETA_MODEL, ...Array(REQUESTS_PAGE_SIZE).fill("k3")];
      for (const model of models) assert.deepEqual(await spend(gw, k.key, model), OK);
      const rows = await usageRows(gw, k.key) as Row[];
      assert.equal(rows.length, models.length);
      const thetaIds = rows.filter((r) => r.model === THETA_MODEL).map((r) => r.request_id);

      const w = await watchedPage(browser, ARTIFACTS, "js");
      await t.step("sign-in form → the overview with the admin API's balance", async () => {
        await signIn(w, gw.url, k.key);
        await assertOverview(gw, w.page, k.id, rows, started);
        assert.deepEqual(await keyState(w.page), ["active", "false"]);
        await w.shot("overview");
        w.assertClean();
      });

      await t.step("usage: 48 hourly points and 30 daily, each the rows' sum per family/model", async () => {
        const before = Date.now();
        await w.page.goto(`${gw.url}/dashboard/usage?range=hours`);
        await assertChart(w.page, rows, "hours", before);
        await w.shot("usage-hours");
        await w.page.goto(`${gw.url}/dashboard/usage?range=days`);
        await assertChart(w.page, rows, "days", before);
        await w.shot("usage-days");
        w.assertClean();
      });

      await t.step(
        "requests: every row once across the pages; the family filter applied by the script",
        async () => {
          await w.page.goto(`${gw.url}/dashboard/requests`);
          await w.shot("requests-page-1");
          assert.ok(await w.page.$(LOCAL_TIME_SHOWN), "the page's script ran (the CSP lets it)");
          assertAllOnce(await pageThrough(w), rows);
          // The script submits the filter form when a select changes.
          await submit(w.page, () => w.page.select(`${FILTERS} select[name="family"]`, "theta"));
          await w.shot("requests-theta");
          assert.equal(new URL(w.page.url()).searchParams.get("family"), "theta");
          assert.deepEqual(await tableIds(w.page), thetaIds);
          assert.equal(await w.page.$('[data-testid="next-page"]'), null);
          w.assertClean();
        },
      );

      await t.step(
        "theta paused from the page: the next theta request is refused 403 api_key_paused",
        async () => {
          await w.page.goto(`${gw.url}/dashboard`);
          await submit(w.page, () => w.page.click('[data-testid="theta-toggle"]'));
          assert.equal(w.page.url(), `${gw.url}/dashboard`);
          assert.deepEqual(await keyState(w.page), ["active", "true"]);
          await w.shot("theta-paused");
          assert.equal((await gw.admin("GET", `/admin/keys/${k.id}`)).json.theta.paused, true);
          assert.deepEqual(await spend(gw, k.key, THETA_MODEL), [403, "api_key_paused"]);
          assert.deepEqual(await spend(gw, k.key, "k3"), OK, "only theta is paused");
          await submit(w.page, () => w.page.click('[data-testid="theta-toggle"]'));
          assert.deepEqual(await keyState(w.page), ["active", "false"]);
          assert.equal((await gw.admin("GET", `/admin/keys/${k.id}`)).json.theta.paused, false);
          assert.deepEqual(await spend(gw, k.key, THETA_MODEL), OK, "resumed");
          w.assertClean();
        },
      );

      await t.step("sign out: the sign-in form again, the old session refused", async () => {
        const old = (await w.context.cookies()).find((c) => c.name === "gw_session");
        assert.ok(old, "signed in with a gw_session cookie");
        const csrf = await w.page.$eval('form[action="/dashboard/theta"] input[name="csrf"]', (e) => e.value);
        await submit(w.page, () => w.page.click('[data-testid="logout"]'));
        await w.shot("signed-out");
        assert.equal(w.page.url(), `${gw.url}/dashboard`);
        assert.ok(await w.page.$(SIGN_IN_KEY));
        assert.equal(await w.page.$('[data-testid="balance"]'), null);
        const cookie = `gw_session=${old.value}`;
        for (const path of ["/dashboard", "/dashboard/requests"]) {
          const html = await (await fetch(gw.url + path, { headers: { cookie } })).text();
          assert.ok(html.includes('name="key"'), `${path}: the sign-in form`);
          assert.ok(!html.includes('data-testid="balance"') && !html.includes("request-row"), path);
        }
        // The theta form replayed with the ended session (and its csrf) changes nothing.
        const replay = await fetch(`${gw.url}/dashboard/theta`, {
          method: "POST",
          headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ paused: "true", csrf }),
          redirect: "manual",
        });
        await replay.body?.cancel();
        assert.equal((await gw.admin("GET", `/admin/keys/${k.id}`)).json.theta.paused, false);
        w.assertClean();
        await w.close();
      });

      await t.step("JavaScript off: sign in, the overview, the requests table and its paging", async () => {
        const now = await usageRows(gw, k.key) as Row[];
        const nojs = await watchedPage(browser, ARTIFACTS, "nojs", { javaScriptEnabled: false });
        await signIn(nojs, gw.url, k.key);
        await assertOverview(gw, nojs.page, k.id, now, started);
        await nojs.shot("overview");
        await nojs.page.goto(`${gw.url}/dashboard/requests`);
        await nojs.shot("requests-page-1");
        assert.ok(await nojs.page.$("time[data-local]"));
        assert.equal(await nojs.page.$(LOCAL_TIME_SHOWN), null, "no script ran");
        assertAllOnce(await pageThrough(nojs), now);
        // Without the script the filter form is submitted by its button.
        await nojs.page.select(`${FILTERS} select[name="family"]`, "theta");
        await submit(nojs.page, () => nojs.page.click(`${FILTERS} button[type="submit"]`));
        assert.deepEqual(
          await tableIds(nojs.page),
          now.filter((r) => r.family === "theta").map((r) => r.request_id),
        );
        nojs.assertClean();
        await nojs.close();
      });
    }),
);
