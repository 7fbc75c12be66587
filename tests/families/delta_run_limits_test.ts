/**
 * Gamma/eta run limits and upstream failures (spec §7.5, §6 rule 4, §8.4) through a running gateway, on the
 * three surfaces (Messages and Chat translated, Responses native), JSON and stream: exact status, code, frames
 * and billing (usage row, balance, no hold left) for delta_run_timeout, delta_upstream_error,
 * delta_output_limit_exceeded, delta_model_mismatch and delta_unavailable. The simulator's signals:
 * `delay` / `fault=stall` (a run that does not finish), `fault=status:500|503`, `error_mid`, `cut_mid`,
 * `truncated_frame`, `non_json`, `loop_limit=N` (the provider's own output limit), `wrong_model`.
 */
import assert from "node:assert/strict";
import { promptTokensOf } from "../../sim/answer.ts";
import { estimateInputTokens, estimateOutputTokens } from "../../src/billing/estimate.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import type { SseFrame } from "../../src/protocols/codec.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { readFrames, SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";

const SURFACES = ["messages", "chat", "responses"] as const;
type Surface = typeof SURFACES[number];
const GAMMA = "gamma-2.5";
const RUN_MS = 150;
const LIMITS = { DELTA_RUN_TIMEOUT_MS: String(RUN_MS) };

interface Sent {
  status: number;
  headers: Headers;
  /** The request body as sent. */
  body: Record<string, unknown>;
  /** JSON answers. */
  json?: any;
  /** Stream answers. */
  frames?: SseFrame[];
  ms: number;
}

async function send(
  t: TestGateway,
  key: string,
  surface: Surface,
  text: string,
  stream: boolean,
  over: Record<string, unknown> = {},
  model = GAMMA,
): Promise<Sent> {
  // Through JSON so `undefined` in `over` removes a field, exactly as the gateway sees the body.
  const body = JSON.parse(JSON.stringify({ ...surfaceBody(surface, model, text, stream), ...over }));
  const t0 = Date.now();
  const res = await post(t.url + SURFACE_PATH[surface], key, body, ANTHROPIC_HEADERS);
  const ct = res.headers.get("content-type") ?? "";
  const out: Sent = { status: res.status, headers: res.headers, body, ms: 0 };
  if (ct.startsWith("text/event-stream")) out.frames = (await readFrames(res)).frames;
  else out.json = await res.json();
  out.ms = Date.now() - t0;
  return out;
}

/** An HTTP error answer: status, code, JSON envelope, nothing streamed. */
function assertHttpError(s: Sent, status: number, code: string, where: string) {
  assert.equal(s.status, status, `${where}: ${JSON.stringify(s.json ?? s.frames)}`);
  assert.ok(s.json, `${where}: a JSON error, not a stream`);
  assert.equal(s.json.error.code, code, where);
  assert.ok(s.json.error.message.endsWith(`[${code} · ${s.headers.get("request-id")}]`), where);
  return s.json.error;
}

const parsed = (frames: SseFrame[]) =>
  frames.map((f) => ({ event: f.event, json: f.data === "[DONE]" ? "[DONE]" : JSON.parse(f.data) }));

/** The text the client received, per surface's delta frames. */
function deliveredText(surface: Surface, frames: SseFrame[]): string[] {
  const out: string[] = [];
  for (const { event, json } of parsed(frames)) {
    if (surface === "messages" && event === "content_block_delta" && json.delta.type === "text_delta") {
      out.push(json.delta.text);
    } else if (surface === "chat" && typeof json === "object" && json.choices?.[0]?.delta?.content) {
      out.push(json.choices[0].delta.content);
    } else if (surface === "responses" && event === "response.output_text.delta") out.push(json.delta);
  }
  return out;
}

/** The stream ends with exactly one error frame in the surface's framing (spec §6); returns its object. */
function assertErrorFrame(surface: Surface, s: Sent, code: string, where: string) {
  assert.equal(s.status, 200, where);
  const p = parsed(s.frames!);
  let error: any;
  if (surface === "chat") {
    const errors = p.filter((f) => typeof f.json === "object" && f.json.error);
    assert.equal(errors.length, 1, where);
    assert.equal(p.at(-1)!.json, "[DONE]", where);
    assert.equal(p.at(-2)!.json, errors[0]!.json, where);
    assert.ok(!p.some((f) => typeof f.json === "object" && f.json.choices?.[0]?.finish_reason), where);
    error = errors[0]!.json.error;
  } else if (surface === "messages") {
    assert.equal(p.filter((f) => f.event === "error").length, 1, where);
    assert.equal(p.at(-1)!.event, "error", where);
    assert.ok(!p.some((f) => f.event === "message_stop" || f.event === "message_delta"), where);
    error = p.at(-1)!.json.error;
  } else {
    assert.equal(p.filter((f) => f.event === "error").length, 1, where);
    assert.equal(p.at(-2)!.event, "error", where);
    assert.equal(p.at(-1)!.event, "response.failed", where);
    assert.equal(p.at(-1)!.json.response.status, "failed", where);
    assert.ok(!p.some((f) => f.event === "response.completed" || f.event === "response.incomplete"), where);
    p.forEach((f, i) => assert.equal(f.json.sequence_number, i, `${where}: sequence_number ${i}`));
    error = p.at(-2)!.json.error;
  }
  assert.equal(error.code, code, where);
  assert.equal(error.request_id, s.headers.get("request-id"), where);
  return error;
}

interface Row {
  request_id: string;
  status: string;
  usage_source: string;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  charged_usd: string;
  written_off_usd: string;
  rates_usd_per_million: { input: string; output: string };
}

/** The key's usage rows by request id. */
async function rowsOf(t: TestGateway, key: string): Promise<Map<string, Row>> {
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(res.status, 200);
  const rows = (await res.json()).data as Row[];
  return new Map(rows.map((r) => [r.request_id, r]));
}

/** The row's tokens at its rates (per token: USD per million / 1e6, exact in pico-USD for the seed rates). */
function priced(r: Row): bigint {
  const perToken = (usd: string) => parseUsd(usd) / 1_000_000n;
  return BigInt(r.input_tokens) * perToken(r.rates_usd_per_million.input) +
    BigInt(r.output_tokens) * perToken(r.rates_usd_per_million.output);
}

/** One request's usage row: its status, source and tokens, and a charge of exactly those tokens. */
function assertRow(
  rows: Map<string, Row>,
  s: Sent,
  want: { status: string; source: string; input: number; output: number },
  where: string,
): bigint {
  const r = rows.get(s.headers.get("request-id")!);
  assert.ok(r, `${where}: a usage row`);
  assert.deepEqual(
    { status: r.status, source: r.usage_source, input: r.input_tokens, output: r.output_tokens },
    want,
    where,
  );
  assert.equal(r.cached_input_tokens, 0, where);
  assert.equal(r.written_off_usd, "0.00", where);
  const charge = priced(r);
  assert.ok(charge > 0n, where);
  assert.equal(r.charged_usd, formatUsd(charge), where);
  return charge;
}

/** No hold left; the balance went down by exactly `spent`. */
async function assertAccount(t: TestGateway, id: string, initial: string, spent: bigint) {
  const a = (await t.admin("GET", `/admin/keys/${id}`)).json;
  assert.equal(a.held_usd, "0.00");
  assert.equal(a.spent_usd, formatUsd(spent));
  assert.equal(a.balance_usd, formatUsd(parseUsd(initial) - spent));
}

async function eventually(check: () => boolean, what: string) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
}

/** The gateway's input estimate of a body (no server prompt on gamma/eta). */
const estimate = (body: Record<string, unknown>) => estimateInputTokens(body);

Deno.test("delta_run_timeout: a JSON run past DELTA_RUN_TIMEOUT_MS is cancelled upstream, 504, billed its input estimate, on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const sent: [Sent, string][] = [];
    for (const surface of SURFACES) {
      // A provider still computing (the head of a JSON answer comes with the answer), or stuck mid-body.
      for (const signal of ["[[sim:delay=5000]]", "[[sim:fault=stall]]"]) {
        const where = `${surface} ${signal}`;
        const aborted = t.sim.aborted;
        const s = await send(t, k.key, surface, `долгая задача ${signal}`, false);
        const err = assertHttpError(s, 504, "delta_run_timeout", where);
        assert.equal(err.type, "timeout_error", where);
        assert.ok(err.message.includes(`Предел времени выполнения: ${RUN_MS / 1000} с.`), err.message);
        assert.ok(s.ms >= RUN_MS && s.ms < 2_000, `${where}: answered after ${s.ms} ms`);
        await eventually(() => t.sim.aborted === aborted + 1, `${where}: the upstream request was cancelled`);
        sent.push([s, where]);
      }
    }
    const rows = await rowsOf(t, k.key);
    let spent = 0n;
    for (const [s, where] of sent) {
      // Nothing was delivered: the run is paid for at the input estimate (docs/billing.md).
      spent += assertRow(rows, s, {
        status: "error",
        source: "estimated",
        input: estimate(s.body),
        output: 0,
      }, where);
    }
    await assertAccount(t, k.id, "1.00", spent);
  }, LIMITS));

Deno.test("delta_run_timeout: a stream past the limit ends with the error event after its text, the upstream cancelled, billed input estimate + delivered output", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const sent: [Sent, string, number][] = [];
    for (const surface of SURFACES) {
      const aborted = t.sim.aborted;
      // Three words arrive, then the upstream goes quiet (well within the idle limit) until the run limit.
      const s = await send(t, k.key, surface, "долгий поток [[sim:fault=stall]] [[sim:words=20]]", true);
      assertErrorFrame(surface, s, "delta_run_timeout", surface);
      const text = deliveredText(surface, s.frames!);
      assert.equal(text.length, 3, `${surface}: the text before the cut is kept: ${text}`);
      assert.ok(s.ms >= RUN_MS && s.ms < 2_000, `${surface}: cut after ${s.ms} ms`);
      await eventually(() => t.sim.aborted === aborted + 1, `${surface}: the upstream request was cancelled`);
      sent.push([s, surface, text.join("").length]);
    }
    // A run within the limit is not touched.
    for (const surface of SURFACES) {
      for (const stream of [false, true]) {
        const s = await send(t, k.key, surface, "быстро [[sim:words=6]]", stream);
        assert.equal(s.status, 200, `${surface} stream=${stream}`);
        if (stream) assert.equal(deliveredText(surface, s.frames!).length, 6);
      }
    }
    const rows = await rowsOf(t, k.key);
    let spent = 0n;
    for (const [s, where, chars] of sent) {
      spent += assertRow(rows, s, {
        status: "error",
        source: "estimated",
        input: estimate(s.body),
        output: estimateOutputTokens(chars),
      }, where);
    }
    for (const r of rows.values()) if (r.status === "ok") spent += parseUsd(r.charged_usd);
    assert.equal(rows.size, 9);
    await assertAccount(t, k.id, "1.00", spent);
  }, LIMITS));

Deno.test("the run limit replaces the headers timeout on gamma/eta's JSON requests only; their streams keep it", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const surface of SURFACES) {
      // The head of a JSON answer comes with the answer: waiting past the headers timeout is the run's time.
      const json = await send(t, k.key, surface, "думаю [[sim:delay=400]]", false);
      assert.equal(json.status, 200, `${surface}: ${JSON.stringify(json.json)}`);
      // A stream's head comes at once; none within the headers timeout is the free upstream_timeout.
      const stream = await send(t, k.key, surface, "думаю [[sim:delay=400]]", true);
      assertHttpError(stream, 504, "upstream_timeout", surface);
    }
    const rows = await rowsOf(t, k.key);
    assert.deepEqual([...rows.values()].map((r) => r.status).sort(), [
      "error",
      "error",
      "error",
      "ok",
      "ok",
      "ok",
    ]);
    const spent = [...rows.values()].reduce((n, r) => n + parseUsd(r.charged_usd), 0n);
    for (const r of rows.values()) if (r.status === "error") assert.equal(r.charged_usd, "0.00");
    await assertAccount(t, k.id, "1.00", spent);
  }, { UPSTREAM_HEADERS_TIMEOUT_MS: "150", DELTA_RUN_TIMEOUT_MS: "5000" }));

Deno.test("delta_upstream_error: a run that failed before the answer started is a free 502, JSON and stream, on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const cases: [string, boolean][] = [
      ["status:500", false],
      ["status:500", true],
      ["non_json", false], // a 200 that is not JSON
      ["non_json", true], // a stream request answered with no SSE
      ["error_mid", false], // the JSON run failed: the provider answers 500
      ["cut_mid", false], // the JSON body broke off
      ["truncated_frame", false], // the JSON body ended half-way
    ];
    for (const surface of SURFACES) {
      for (const [fault, stream] of cases) {
        const where = `${surface} ${fault} stream=${stream}`;
        const s = await send(t, k.key, surface, `x [[sim:fault=${fault}]]`, stream);
        const err = assertHttpError(s, 502, "delta_upstream_error", where);
        assert.equal(err.type, "api_error", where);
      }
    }
    const rows = await rowsOf(t, k.key);
    assert.equal(rows.size, SURFACES.length * cases.length);
    for (const r of rows.values()) assert.deepEqual([r.status, r.charged_usd], ["error", "0.00"]);
    await assertAccount(t, k.id, "1.00", 0n);
  }));

Deno.test("delta_upstream_error: a run that failed after the stream started ends with the error event, billed for what was delivered", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const sent: [Sent, string, number][] = [];
    for (const surface of SURFACES) {
      // The provider's error event (Responses `error` + `response.failed`), a cut connection, a frame cut in half.
      for (const fault of ["error_mid", "cut_mid", "truncated_frame"]) {
        const where = `${surface} ${fault}`;
        const s = await send(t, k.key, surface, `x [[sim:fault=${fault}]] [[sim:words=20]]`, true);
        assertErrorFrame(surface, s, "delta_upstream_error", where);
        const text = deliveredText(surface, s.frames!);
        assert.equal(text.length, 3, `${where}: ${text}`);
        sent.push([s, where, text.join("").length]);
      }
    }
    const rows = await rowsOf(t, k.key);
    let spent = 0n;
    for (const [s, where, chars] of sent) {
      // The answer had started: paid for (spec §7.5); no usage came, so the estimate of what was delivered.
      spent += assertRow(rows, s, {
        status: "error",
        source: "estimated",
        input: estimate(s.body),
        output: estimateOutputTokens(chars),
      }, where);
    }
    await assertAccount(t, k.id, "1.00", spent);
  }));

Deno.test("delta_output_limit_exceeded: a JSON answer the provider cut below the client's budget, or with none, is a 502 billed at the provider's usage", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const cases: [Surface, Record<string, unknown>][] = [
      ["messages", {}], // max_tokens 200
      ["chat", {}], // max_tokens 200
      ["chat", { max_tokens: undefined }],
      ["responses", {}], // max_output_tokens 200
      ["responses", { max_output_tokens: undefined }],
    ];
    let spent = 0n;
    for (const [surface, over] of cases) {
      const where = `${surface} ${JSON.stringify(over)}`;
      const s = await send(
        t,
        k.key,
        surface,
        "большая задача [[sim:loop_limit=5]] [[sim:words=20]]",
        false,
        over,
      );
      const err = assertHttpError(s, 502, "delta_output_limit_exceeded", where);
      assert.equal(err.type, "api_error", where);
      // The provider's usage: its prompt count of the upstream body, the 5 tokens it generated.
      const up = t.sim.requests.at(-1)!.body as Record<string, unknown>;
      const input = promptTokensOf(up.instructions, up.input, up.tools);
      spent += assertRow(
        await rowsOf(t, k.key),
        s,
        { status: "error", source: "upstream", input, output: 5 },
        where,
      );
    }
    await assertAccount(t, k.id, "1.00", spent);
  }));

Deno.test("delta_output_limit: a stream keeps its text and ends like a budget cut (max_tokens, length, response.incomplete); a cut at the client's own budget is the ordinary answer", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const ok: [Sent, string][] = [];
    for (const surface of SURFACES) {
      const s = await send(t, k.key, surface, "большая задача [[sim:loop_limit=5]] [[sim:words=20]]", true);
      assert.equal(s.status, 200, surface);
      assert.equal(deliveredText(surface, s.frames!).length, 5, `${surface}: the text is kept`);
      const p = parsed(s.frames!);
      assert.ok(!p.some((f) => f.event === "error" || (typeof f.json === "object" && f.json.error)), surface);
      if (surface === "messages") {
        assert.equal(p.find((f) => f.event === "message_delta")!.json.delta.stop_reason, "max_tokens");
        assert.equal(p.at(-1)!.event, "message_stop");
      } else if (surface === "chat") {
        assert.equal(p.at(-2)!.json.choices[0].finish_reason, "length");
        assert.equal(p.at(-1)!.json, "[DONE]");
      } else {
        assert.equal(p.at(-1)!.event, "response.incomplete");
        assert.deepEqual(p.at(-1)!.json.response.incomplete_details, { reason: "max_output_tokens" });
      }
      ok.push([s, `${surface} stream`]);
      // The client's own budget reached: the ordinary incomplete answer, JSON too.
      const own = await send(t, k.key, surface, "x [[sim:words=20]]", false, {
        [surface === "responses" ? "max_output_tokens" : "max_tokens"]: 5,
      });
      assert.equal(own.status, 200, `${surface}: ${JSON.stringify(own.json)}`);
      if (surface === "messages") assert.equal(own.json.stop_reason, "max_tokens");
      else if (surface === "chat") assert.equal(own.json.choices[0].finish_reason, "length");
      else {assert.deepEqual([own.json.status, own.json.incomplete_details], ["incomplete", {
          reason: "max_output_tokens",
        }]);}
      ok.push([own, `${surface} own budget`]);
    }
    const rows = await rowsOf(t, k.key);
    let spent = 0n;
    for (const [s, where] of ok) {
      const r = rows.get(s.headers.get("request-id")!)!;
      assert.deepEqual([r.status, r.usage_source, r.output_tokens], ["ok", "upstream", 5], where);
      assert.equal(r.charged_usd, formatUsd(priced(r)), where);
      spent += priced(r);
    }
    await assertAccount(t, k.id, "1.00", spent);
  }));

Deno.test("delta_model_mismatch: another model answering upstream is a free 502 before anything is sent, JSON and stream, on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const model of [GAMMA, "delta-eta-4.6-high"]) {
      for (const surface of SURFACES) {
        for (const stream of [false, true]) {
          const where = `${model} ${surface} stream=${stream}`;
          const s = await send(
            t,
            k.key,
            surface,
            "x [[sim:fault=wrong_model]] [[sim:words=5]]",
            stream,
            {},
            model,
          );
          const err = assertHttpError(s, 502, "delta_model_mismatch", where);
          assert.equal(err.type, "api_error", where);
        }
      }
    }
    await assertAccount(t, k.id, "1.00", 0n);
    // Compared with the model the upstream request carried (eta's ids share one upstream model): answered.
    const s = await send(t, k.key, "chat", "x [[sim:words=3]]", true, {}, "delta-eta-4.6-high");
    assert.equal(s.status, 200);
    assert.equal((t.sim.requests.at(-1)!.body as { model: string }).model, "eta-4.6");
    assert.equal(deliveredText("chat", s.frames!).length, 3);
  }));

Deno.test("delta_unavailable: an upstream 503 is a free 503 with Retry-After, JSON and stream, on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const surface of SURFACES) {
      for (const stream of [false, true]) {
        const where = `${surface} stream=${stream}`;
        const s = await send(t, k.key, surface, "x [[sim:fault=status:503]]", stream);
        assertHttpError(s, 503, "delta_unavailable", where);
        assert.equal(s.headers.get("retry-after"), "1", where);
      }
    }
    await assertAccount(t, k.id, "1.00", 0n);
  }));

Deno.test("delta_unavailable: an unreachable upstream is a free 503, JSON and stream, on every surface", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close(); // nothing listens there now: connection refused
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const surface of SURFACES) {
      for (const stream of [false, true]) {
        const s = await send(t, k.key, surface, "x", stream);
        assertHttpError(s, 503, "delta_unavailable", `${surface} stream=${stream}`);
      }
    }
    await assertAccount(t, k.id, "1.00", 0n);
  }, { DELTA_UPSTREAM_URL: `http://127.0.0.1:${port}` });
});
