/**
 * §6 / §3.3: any failure after the 200 ends the stream with exactly one error frame carrying the
 * §2.5 object (per surface framing), and the hold is settled exactly once.
 */
import assert from "node:assert/strict";
import { GatewayError } from "../../src/errors/gateway_error.ts";
import type { FamilyPolicy } from "../../src/families/policy.ts";
import { ANTHROPIC_HEADERS, post, startTestGateway } from "../support/harness.ts";
import {
  assertCleanEnding,
  assertErrorEnding,
  readFrames,
  SURFACE_PATH,
  surfaceBody,
} from "../support/sse_client.ts";

type Surface = "messages" | "chat" | "responses";
const SURFACES: Surface[] = ["messages", "chat", "responses"];
const MODELS: Record<string, string> = {
  alpha: "k3",
  beta: "beta-haiku-4-5",
  gamma: "gamma-2.5",
  eta: "delta-eta-4.6-low",
  theta: "theta3.8-omni-flash",
};
const IN_STREAM_CODE: Record<string, string> = {
  alpha: "alpha_unavailable",
  beta: "stream_service_error",
  gamma: "delta_upstream_error",
  eta: "delta_upstream_error",
  theta: "stream_service_error",
};
/** An upstream stream that breaks off (cut, malformed frame): gamma/eta's run did not complete (spec §6 rule 4). */
const BROKEN_CODE = (family: string) =>
  family === "gamma" || family === "eta" ? "delta_upstream_error" : "stream_service_error";

Deno.test("stream faults end with exactly one error frame on every surface and family", async () => {
  const t = await startTestGateway({ STREAM_IDLE_TIMEOUT_MS: "400", STREAM_HEARTBEAT_MS: "100" });
  try {
    const k = await t.newKey("50.00");
    const faults: [string, (family: string) => string][] = [
      ["error_mid", (f) => IN_STREAM_CODE[f]!],
      ["cut_mid", BROKEN_CODE],
      ["truncated_frame", BROKEN_CODE],
      ["stall", () => "stream_timeout"],
    ];
    for (const [family, model] of Object.entries(MODELS)) {
      for (const surface of SURFACES) {
        const headers = surface === "messages" ? { ...ANTHROPIC_HEADERS } : {};
        // A clean stream first: terminal frames, no error.
        const ok = await post(
          t.url + SURFACE_PATH[surface],
          k.key,
          surfaceBody(surface, model, "Привет [[sim:words=6]]"),
          headers,
        );
        assert.equal(ok.status, 200, `${family}/${surface}`);
        assertCleanEnding(surface, (await readFrames(ok)).frames, `${family}/${surface} clean`);
        for (const [fault, code] of faults) {
          const where = `${family}/${surface}/${fault}`;
          const res = await post(
            t.url + SURFACE_PATH[surface],
            k.key,
            surfaceBody(surface, model, `Привет [[sim:fault=${fault}]] [[sim:words=20]]`),
            headers,
          );
          assert.equal(res.status, 200, where);
          const { frames } = await readFrames(res);
          const err = assertErrorEnding(surface, frames, where);
          assert.equal(err.code, code(family), where);
          assert.equal(err.request_id, res.headers.get("request-id"), where);
          assert.ok(err.message.endsWith(`[${err.code} · ${err.request_id}]`), where);
        }
      }
    }
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00");
    assert.notEqual(json.spent_usd, "0.00");
  } finally {
    await t.close();
  }
});

Deno.test("an upstream error before the first byte is an ordinary HTTP error", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("5.00");
    const cases: [string, string, number, string][] = [
      ["k3", "status:503", 503, "alpha_unavailable"],
      ["k3", "status:500", 503, "alpha_unavailable"],
      ["beta-haiku-4-5", "status:529", 503, "upstream_unavailable"],
      ["gamma-2.5", "status:500", 502, "delta_upstream_error"],
      ["delta-eta-4.6-high", "status:503", 503, "delta_unavailable"],
      ["theta3.7-plus", "status:503", 503, "theta_unavailable"],
      ["k3", "status:429", 429, "alpha_provider_rate_limit"],
      // Theta tries every model that accepts the request on its account first (fallback), then gives up.
      ["theta3.7-plus", "status:429", 429, "provider_at_capacity"],
      ["k3", "non_json", 502, "upstream_invalid_response"],
    ];
    for (const [model, fault, status, code] of cases) {
      for (const stream of [true, false]) {
        // A 200 that is not SSE on a stream request is refused before the 200 goes out (hardening issue).
        const res = await post(
          t.url + "/v1/chat/completions",
          k.key,
          surfaceBody("chat", model, `x [[sim:fault=${fault}]]`, stream),
        );
        const json = await res.json();
        const where = `${model} ${fault} stream=${stream}: ${JSON.stringify(json)}`;
        assert.equal(res.status, status, where);
        assert.equal(json.error.code, code, where);
      }
    }
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00");
    assert.equal(json.spent_usd, "0.00", "an error before the first byte costs nothing");
  } finally {
    await t.close();
  }
});

Deno.test("a family's rule on the decoded request refuses before the hold, on every surface", async () => {
  // Plant a rule on this gateway's gamma policy (its own object: no other gateway sees it).
  const t = await startTestGateway();
  const policy: FamilyPolicy = t.gw.app.families.gamma;
  policy.request = (_m, ir) => {
    if ((ir.maxOutputTokens ?? 0) > 100) {
      throw new GatewayError("delta_parameter_unavailable", { param: "max_tokens" });
    }
  };
  try {
    const k = await t.newKey("1.00");
    for (const surface of ["messages", "chat", "responses"] as const) {
      const res = await post(t.url + SURFACE_PATH[surface], k.key, surfaceBody(surface, "gamma-2.5", "hi"), {
        ...ANTHROPIC_HEADERS,
      });
      const json = await res.json();
      assert.equal(res.status, 400, `${surface}: ${JSON.stringify(json)}`);
      assert.equal(json.error.code, "delta_parameter_unavailable");
      assert.equal(res.headers.get("x-gateway-hold-usd"), null, "refused before any hold");
    }
    assert.equal((await t.admin("GET", `/admin/keys/${k.id}`)).json.spent_usd, "0.00");
  } finally {
    await t.close();
  }
});
