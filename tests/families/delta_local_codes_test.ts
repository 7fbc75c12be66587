/**
 * Gamma/eta's local refusals of spec §7.5 on every surface: a misspelled id, the context windows (200,000 for
 * gamma, 500,000 for eta), a reserve above the balance and the key's own caps with the delta_ codes — each
 * with its status, before anything is held or sent, so free.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";

const SURFACES = ["messages", "chat", "responses"] as const;
type Surface = typeof SURFACES[number];

async function call(
  t: TestGateway,
  key: string,
  surface: Surface,
  model: string,
  text: string,
  maxTokens = 50,
) {
  const body = surfaceBody(surface, model, text, false) as Record<string, unknown>;
  body[surface === "responses" ? "max_output_tokens" : "max_tokens"] = maxTokens;
  const res = await post(t.url + SURFACE_PATH[surface], key, body, ANTHROPIC_HEADERS);
  const json = await res.json();
  return { status: res.status, code: json.error?.code as string | undefined, res };
}

/** About `tokens` tokens by the gateway's estimate (≈ 3 characters a token). */
const words = (tokens: number) => "слово ".repeat(Math.ceil(tokens / 2));

Deno.test("gamma/eta: a misspelled id is 404 model_not_found on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const surface of SURFACES) {
      for (const id of ["gamma-25", "delta-eta-4.6", "delta-eta-4.6-max", "gamma-2.5-slow"]) {
        const r = await call(t, k.key, surface, id, "hi");
        assert.deepEqual([r.status, r.code], [404, "model_not_found"], `${surface} ${id}`);
      }
    }
    assert.equal(t.sim.requests.length, 0);
  }));

Deno.test("gamma/eta: the context windows — 200,000 for gamma, 500,000 for eta — on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("20.00");
    const between = words(300_000); // over gamma's window, within eta's
    const over = words(520_000);
    for (const surface of SURFACES) {
      for (const model of ["gamma-2.5", "gamma-2.5-fast"]) {
        const r = await call(t, k.key, surface, model, between);
        assert.deepEqual([r.status, r.code], [400, "context_length_exceeded"], `${surface} ${model}`);
      }
      const eta = await call(t, k.key, surface, "delta-eta-4.6-low", between);
      assert.equal(eta.status, 200, `${surface}: eta takes 300k`);
      const etaOver = await call(t, k.key, surface, "delta-eta-4.6-low", over);
      assert.deepEqual([etaOver.status, etaOver.code], [400, "context_length_exceeded"], surface);
    }
    assert.equal(t.sim.requests.length, 3, "only eta's three accepted requests went upstream");
  }));

Deno.test("gamma/eta: a reserve above the balance is 402 request_reserve_exceeds_credit, free", () =>
  withGateway(async (t) => {
    const k = await t.newKey("0.01");
    for (const surface of SURFACES) {
      // eta's output rate (8 USD per 1M placeholder) × 64,000 tokens is well above 0.01.
      const r = await call(t, k.key, surface, "delta-eta-4.6-high", "hi", 64_000);
      assert.deepEqual([r.status, r.code], [402, "request_reserve_exceeds_credit"], surface);
    }
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.deepEqual([json.balance_usd, json.held_usd], ["0.01", "0.00"]);
    assert.equal(t.sim.requests.length, 0);
  }));

Deno.test("gamma/eta: the key's caps answer with the delta_ codes and Retry-After, on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const caps = (body: Record<string, unknown>) => t.admin("POST", `/admin/keys/${k.id}/caps`, body);
    // Something spent first, so the spend caps have something to be crossed by.
    assert.equal((await call(t, k.key, "chat", "gamma-2.5", "hi [[sim:words=3]]")).status, 200);
    const cases: [Record<string, unknown>, string, number][] = [
      [{ hourly_reserve_usd: "0.000001" }, "delta_hourly_reserve_limit", 3600],
      [{ daily_reserve_usd: "0.000001" }, "delta_daily_reserve_limit", 86_400],
      [{ hourly_spend_usd: "0.000001" }, "delta_hourly_spend_limit", 3600],
      [{ daily_spend_usd: "0.000001" }, "delta_daily_spend_limit", 86_400],
    ];
    const none = {
      hourly_reserve_usd: null,
      daily_reserve_usd: null,
      hourly_spend_usd: null,
      daily_spend_usd: null,
    };
    const sent = t.sim.requests.length;
    for (const [cap, code, window] of cases) {
      assert.equal((await caps({ ...none, ...cap })).status, 200);
      for (const surface of SURFACES) {
        for (const model of ["gamma-2.5", "delta-eta-4.6-medium-fast"]) {
          const r = await call(t, k.key, surface, model, "hi");
          assert.deepEqual([r.status, r.code], [429, code], `${surface} ${model}`);
          const ra = Number(r.res.headers.get("retry-after"));
          assert.ok(ra > 0 && ra <= window, `${code}: Retry-After ${ra}`);
        }
      }
    }
    assert.equal(t.sim.requests.length, sent, "no capped request went upstream");
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00");
  }));
