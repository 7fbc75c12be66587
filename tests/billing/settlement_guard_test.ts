/**
 * Through a real gateway: a request that fails between the hold and its answer — at a point no code names —
 * has its hold released exactly once by the request's settlement guard (src/engine/settlement.ts): held 0.00,
 * the balance unchanged, one usage row (error, 0.00), and the family's upstream account given back.
 */
import assert from "node:assert/strict";
import type { UpstreamResponse } from "../../src/upstream/upstream_response.ts";
import type { UpstreamFetch } from "../../src/upstream/wire_client.ts";
import { ANTHROPIC_HEADERS, post, startTestGateway, type TestGateway } from "../support/harness.ts";
import { SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";
import { usageRows } from "../support/usage_rows.ts";

/** A chat model of each pool kind: alpha (one upstream key), theta (an account leased from its pool). */
const MODELS = { alpha: "k3", theta: "theta3.8-omni-flash" };

/** The upstream client answers a head the engine fails on as it reads it (a broken dependency). */
function failingHead(real: UpstreamFetch): UpstreamFetch {
  return async (url, init) => {
    const res = await real(url, init);
    await res.body?.cancel().catch(() => {});
    return {
      status: res.status,
      statusText: res.statusText,
      get ok(): boolean {
        throw new Error("injected: the head cannot be read");
      },
      headers: res.headers,
      body: null,
      text: () => Promise.resolve(""),
    } satisfies UpstreamResponse;
  };
}

/** The key's money and rows after one failed request: nothing held, nothing spent, one free error row. */
async function assertReleasedOnce(t: TestGateway, k: { id: string; key: string }, where: string) {
  const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
  assert.deepEqual([json.balance_usd, json.held_usd, json.spent_usd], ["1.00", "0.00", "0.00"], where);
  const rows = await usageRows(t, k.key);
  assert.deepEqual(
    rows.map((r) => [r.status, r.charged_usd, r.output_tokens]),
    [["error", "0.00", 0]],
    where,
  );
}

Deno.test("settlement guard: a failure after the upstream's head, before the answer, releases the hold once", async () => {
  const t = await startTestGateway();
  const real = t.gw.app.upstreamFetch;
  try {
    for (const [family, model] of Object.entries(MODELS)) {
      for (const stream of [false, true]) {
        const where = `${family} ${stream ? "stream" : "json"}`;
        const k = await t.newKey("1.00");
        t.gw.app.upstreamFetch = failingHead(real);
        const res = await post(
          t.url + SURFACE_PATH.chat,
          k.key,
          surfaceBody("chat", model, "Привет", stream),
        );
        t.gw.app.upstreamFetch = real;
        const body = await res.json();
        assert.equal(res.status, 500, `${where}: ${JSON.stringify(body)}`);
        assert.equal(body.error.code, "internal_error", where);
        assert.equal(res.headers.get("x-gateway-hold-usd"), null, `${where}: an error carries no hold`);
        await assertReleasedOnce(t, k, where);
        // The upstream account went back with the settlement: the family serves the next request at once.
        const next = await post(
          t.url + SURFACE_PATH.chat,
          k.key,
          surfaceBody("chat", model, "Привет", false),
        );
        assert.equal(next.status, 200, `${where}: ${await next.text()}`);
      }
    }
  } finally {
    t.gw.app.upstreamFetch = real;
    await t.close();
  }
});

Deno.test("settlement guard: an upstream that cannot be reached releases the hold once (503, free)", async () => {
  const t = await startTestGateway();
  const real = t.gw.app.upstreamFetch;
  try {
    const k = await t.newKey("1.00");
    t.gw.app.upstreamFetch = () => Promise.reject(new TypeError("injected: connection refused"));
    const res = await post(t.url + SURFACE_PATH.messages, k.key, surfaceBody("messages", "k3", "Привет"), {
      ...ANTHROPIC_HEADERS,
    });
    t.gw.app.upstreamFetch = real;
    const body = await res.json();
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, "alpha_unavailable");
    await assertReleasedOnce(t, k, "unreachable");
  } finally {
    t.gw.app.upstreamFetch = real;
    await t.close();
  }
});

Deno.test("settlement guard: a stream whose 200 never went out is ended and its hold released once", async () => {
  const t = await startTestGateway();
  // The last step before the 200 goes out fails (the open-streams gauge, a dependency of every stream).
  const gauge = t.gw.app.metrics.openStreams;
  const inc = gauge.inc;
  try {
    const k = await t.newKey("1.00");
    gauge.inc = () => {
      throw new Error("injected: the gauge is broken");
    };
    const res = await post(
      t.url + SURFACE_PATH.chat,
      k.key,
      surfaceBody("chat", "k3", "Привет [[sim:words=30]]"),
    );
    gauge.inc = inc;
    const body = await res.json();
    assert.equal(res.status, 500, JSON.stringify(body));
    assert.equal(body.error.code, "internal_error");
    await assertReleasedOnce(t, k, "abandoned stream");
  } finally {
    gauge.inc = inc;
    await t.close();
  }
});
