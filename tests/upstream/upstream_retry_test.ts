/**
 * Upstream failures before the first byte through a running gateway (docs/api.md "Errors"): one jittered retry
 * for a failure safe to repeat (connection refused, upstream 502/503), never after a timeout or once the
 * answer started; the family's 503 with Retry-After when the provider stays down; 504 upstream_timeout when
 * no head comes in time, connecting included. Nothing is held or charged for any of them.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";
import { flakyUpstream } from "../support/upstream_stubs.ts";

type Surface = "messages" | "chat" | "responses";

/** One model per family with the family's 503 and its upstream protocol's own surface (native route). */
const FAMILIES = [
  { model: "k3", surface: "chat", code: "alpha_unavailable" },
  { model: "beta-haiku-4-5", surface: "messages", code: "upstream_unavailable" },
  { model: "gamma-2.5", surface: "responses", code: "delta_unavailable" },
  { model: "theta3.7-plus", surface: "chat", code: "theta_unavailable" },
] as const;

function send(t: TestGateway, key: string, model: string, surface: Surface, text: string, stream: boolean) {
  return post(
    t.url + SURFACE_PATH[surface],
    key,
    surfaceBody(surface, model, text, stream),
    surface === "messages" ? ANTHROPIC_HEADERS : {},
  );
}

/** Counts the retry's draws of the gateway's jitter source (one per retry). */
function countDraws(t: TestGateway) {
  const c = { draws: 0 };
  t.gw.app.random = () => (c.draws++, 0.5);
  return c;
}

async function keyView(t: TestGateway, id: string) {
  return (await t.admin("GET", `/admin/keys/${id}`)).json;
}

async function usageRows(t: TestGateway, id: string) {
  await t.gw.app.accounts.committer.flush();
  return (await t.gw.app.store.listUsage(id, { limit: 100 })).rows;
}

async function assertHttpError(
  res: Response,
  status: number,
  code: string,
  retryAfter: string | null,
  where: string,
) {
  const json = await res.json();
  assert.equal(res.status, status, `${where}: ${JSON.stringify(json)}`);
  assert.equal(json.error.code, code, where);
  assert.equal(json.request_id, res.headers.get("request-id"), where);
  assert.ok(json.error.message.endsWith(`[${code} · ${json.request_id}]`), where);
  assert.equal(res.headers.get("retry-after"), retryAfter, where);
}

/** A local port nothing listens on: connecting is refused. */
function closedPortUrl(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://127.0.0.1:${port}`;
}

Deno.test("retry: an upstream 503 or 502 then an answer — one retry, one answer, one charge", async () => {
  const sim = await startSimulator();
  const up = flakyUpstream(sim.url);
  try {
    await withGateway(async (t) => {
      const draws = countDraws(t);
      const k = await t.newKey("10.00");
      let charged = 0n;
      let n = 0;
      for (const f of FAMILIES) {
        for (const [stream, status] of [[false, 503], [true, 502]] as const) {
          const where = `${f.model} stream=${stream} ${status}`;
          up.failNext(1, status);
          const res = await send(t, k.key, f.model, f.surface, "привет", stream);
          const text = await res.text();
          assert.equal(res.status, 200, `${where}: ${text}`);
          assert.doesNotMatch(text, /"error":\s*\{/, where);
          assert.equal(up.requests, 2, `${where}: two upstream attempts`);
          assert.equal(draws.draws, ++n, `${where}: one backoff draw`);
        }
      }
      const rows = await usageRows(t, k.id);
      assert.equal(rows.length, FAMILIES.length * 2, "one usage row per request");
      for (const row of rows) {
        assert.equal(row.status, "ok");
        assert.ok(row.charged > 0n);
        charged += row.charged;
      }
      assert.equal((await keyView(t, k.id)).held_usd, "0.00");
      assert.equal(t.gw.app.accounts.get(k.id)!.rec.spent, charged, "charged once per request");
    }, {
      ALPHA_UPSTREAM_URL: up.url,
      BETA_UPSTREAM_URL: up.url,
      DELTA_UPSTREAM_URL: up.url,
      THETA_UPSTREAM_URL: up.url,
    });
  } finally {
    await up.close();
    await sim.close();
  }
});

Deno.test("retry: an upstream 503 twice is the family's 503 with Retry-After (the upstream's; theta 30 s), free, after two attempts", () =>
  withGateway(async (t) => {
    const draws = countDraws(t);
    const k = await t.newKey("10.00");
    let n = 0;
    for (const f of FAMILIES) {
      for (const stream of [false, true]) {
        const where = `${f.model} stream=${stream}`;
        const before = t.sim.requests.length;
        const res = await send(t, k.key, f.model, f.surface, "[[sim:fault=status:503]]", stream);
        // The simulator sends Retry-After: 1 with its 503: passed on, but theta's is fixed (spec §7.6).
        await assertHttpError(res, 503, f.code, f.code === "theta_unavailable" ? "30" : "1", where);
        assert.equal(t.sim.requests.length - before, 2, `${where}: two attempts`);
        assert.equal(draws.draws, ++n, where);
      }
    }
    const view = await keyView(t, k.id);
    assert.deepEqual([view.balance_usd, view.held_usd, view.spent_usd], ["10.00", "0.00", "0.00"]);
    for (const row of await usageRows(t, k.id)) assert.deepEqual([row.status, row.charged], ["error", 0n]);
    assert.equal(t.gw.app.slots.inflight, 0);
  }));

Deno.test("retry: never once the answer started, never for a 500, a 429 or a timeout — one attempt each", () =>
  withGateway(async (t) => {
    const draws = countDraws(t);
    const k = await t.newKey("10.00");
    const cases: [string, boolean, number, string][] = [
      ["[[sim:fault=error_mid]]", true, 200, "alpha_unavailable"], // the error frame after the 200
      ["[[sim:fault=status:500]]", false, 503, "alpha_unavailable"],
      ["[[sim:fault=status:429]]", false, 429, "alpha_provider_rate_limit"],
      ["[[sim:delay=3000]]", false, 504, "upstream_timeout"],
    ];
    for (const [text, stream, status, code] of cases) {
      const before = t.sim.requests.length;
      const res = await send(t, k.key, "k3", "chat", text, stream);
      assert.equal(res.status, status, text);
      assert.match(await res.text(), new RegExp(code), text);
      assert.equal(t.sim.requests.length - before, 1, `${text}: one attempt`);
    }
    assert.equal(draws.draws, 0);
  }, { UPSTREAM_HEADERS_TIMEOUT_MS: "300", UPSTREAM_GENERATION_TIMEOUT_MS: "300" }));

Deno.test("retry: a refused connection is retried once, then the family's 503 with Retry-After (2 s; theta 30 s), free", async () => {
  const refused = closedPortUrl();
  await withGateway(async (t) => {
    const draws = countDraws(t);
    const k = await t.newKey("10.00");
    let n = 0;
    for (const f of FAMILIES) {
      for (const stream of [false, true]) {
        const where = `${f.model} stream=${stream}`;
        const res = await send(t, k.key, f.model, f.surface, "привет", stream);
        await assertHttpError(res, 503, f.code, f.code === "theta_unavailable" ? "30" : "2", where);
        assert.equal(draws.draws, ++n, `${where}: retried once`);
      }
    }
    const view = await keyView(t, k.id);
    assert.deepEqual([view.balance_usd, view.held_usd, view.spent_usd], ["10.00", "0.00", "0.00"]);
    assert.equal(t.gw.app.slots.inflight, 0);
  }, {
    ALPHA_UPSTREAM_URL: refused,
    BETA_UPSTREAM_URL: refused,
    DELTA_UPSTREAM_URL: refused,
    THETA_UPSTREAM_URL: refused,
  });
});

Deno.test("timeout: a connection that never completes (TLS unanswered) ends at the headers timeout — 504, one attempt, free", async () => {
  // Deno's fetch has no connect timeout of its own: UPSTREAM_HEADERS_TIMEOUT_MS bounds connecting too (a
  // stream's), UPSTREAM_GENERATION_TIMEOUT_MS a JSON request's whole call.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  try {
    await withGateway(async (t) => {
      const draws = countDraws(t);
      const k = await t.newKey("10.00");
      for (const stream of [false, true]) {
        const res = await send(t, k.key, "k3", "chat", "привет", stream);
        await assertHttpError(res, 504, "upstream_timeout", null, `stream=${stream}`);
      }
      assert.equal(held.length, 2, "one connection per request: a timeout is never retried");
      assert.equal(draws.draws, 0);
      const view = await keyView(t, k.id);
      assert.deepEqual([view.balance_usd, view.held_usd], ["10.00", "0.00"]);
    }, {
      ALPHA_UPSTREAM_URL: `https://127.0.0.1:${(silent.addr as Deno.NetAddr).port}`,
      UPSTREAM_HEADERS_TIMEOUT_MS: "300",
      UPSTREAM_GENERATION_TIMEOUT_MS: "300",
    });
  } finally {
    silent.close();
    for (const c of held) c.close();
  }
});
