/**
 * Structured logs (issue 17 item 7): one JSON line per API request when it ends — a stream when the stream
 * ends — with its id, key id (never the key), family, model, surface, HTTP status, error code, tokens,
 * money and timings; probes and metrics are not logged; LOG_LEVEL drops request lines above info.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { startTestGateway } from "../support/harness.ts";

const FIELDS = [
  "ts",
  "level",
  "msg",
  "request_id",
  "route",
  "surface",
  "key_id",
  "family",
  "model",
  "stream",
  "status",
  "code",
  "input_tokens",
  "cached_input_tokens",
  "output_tokens",
  "web_search_requests",
  "reserved_usd",
  "charged_usd",
  "written_off_usd",
  "usage_source",
  "usage_status",
  "total_ms",
  "upstream_ttfb_ms",
  "upstream_ms",
];

/** The gateway with its log lines captured, at LOG_LEVEL=info unless `env` says otherwise. */
async function withLog(
  fn: (t: TestGateway, lines: () => any[]) => Promise<void>,
  env: Record<string, string> = {},
) {
  const captured: string[] = [];
  const t = await startTestGateway({ LOG_LEVEL: "info", ...env }, { logSink: (l) => captured.push(l) });
  try {
    await fn(t, () => captured.map((l) => JSON.parse(l)));
  } finally {
    await t.close();
  }
}

/** The one request line of a request id (polled: a stream's line comes when its pipeline ends). */
async function lineOf(lines: () => any[], requestId: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const found = lines().filter((l) => l.msg === "request" && l.request_id === requestId);
    if (found.length > 0) {
      assert.equal(found.length, 1, `one line for ${requestId}`);
      return found[0];
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no log line for ${requestId}`);
}

Deno.test("LOG_OK_GENERATIONS=on: one JSON line per API request with its fields; a stream's line when the stream ends; no key", async () => {
  await withLog(async (t, lines) => {
    const { id, key } = await t.newKey("5.00");
    const json = await post(t.url + "/v1/chat/completions", key, {
      model: "k3",
      max_tokens: 50,
      messages: [{ role: "user", content: "Привет [[sim:words=4]]" }],
    });
    assert.equal(json.status, 200);
    await json.json();
    const a = await lineOf(lines, json.headers.get("request-id")!);
    assert.deepEqual(Object.keys(a), FIELDS);
    assert.equal(a.level, "info");
    assert.equal(a.route, "/v1/chat/completions");
    assert.equal(a.surface, "openai_chat");
    assert.equal(a.key_id, id);
    assert.equal(a.family, "alpha");
    assert.equal(a.model, "k3");
    assert.equal(a.stream, false);
    assert.equal(a.status, 200);
    assert.equal(a.code, null);
    assert.equal(a.output_tokens, 4);
    assert.equal(a.usage_source, "upstream");
    assert.equal(a.usage_status, "ok");
    assert.match(a.charged_usd, /^0\.\d+$/);
    assert.equal(a.reserved_usd, json.headers.get("x-gateway-hold-usd"));
    assert.ok(a.total_ms >= a.upstream_ms && a.upstream_ms >= a.upstream_ttfb_ms && a.upstream_ttfb_ms >= 0);

    // A stream cut mid-way by the upstream: status 200, the error frame's code, billed as delivered.
    const stream = await post(t.url + "/v1/messages", key, {
      model: "beta-haiku-4-5",
      max_tokens: 50,
      stream: true,
      messages: [{ role: "user", content: "Привет [[sim:fault=error_mid]] [[sim:words=10]]" }],
    }, ANTHROPIC_HEADERS);
    assert.equal(stream.status, 200);
    const rid = stream.headers.get("request-id")!;
    await stream.text();
    const s = await lineOf(lines, rid);
    assert.equal(s.surface, "anthropic");
    assert.equal(s.family, "beta");
    assert.equal(s.stream, true);
    assert.equal(s.status, 200);
    assert.equal(typeof s.code, "string");
    assert.equal(s.usage_status, "error");

    // A stream whose upstream connection breaks: its line, and a warning saying what broke it.
    const cut = await post(t.url + "/v1/chat/completions", key, {
      model: "k3",
      max_tokens: 50,
      stream: true,
      messages: [{ role: "user", content: "Привет [[sim:fault=cut_mid]] [[sim:words=10]]" }],
    });
    const cutId = cut.headers.get("request-id")!;
    await cut.text();
    assert.equal((await lineOf(lines, cutId)).code, "stream_service_error");
    const warned = lines().filter((l) => l.msg === "stream failed" && l.request_id === cutId);
    assert.equal(warned.length, 1);
    assert.equal(warned[0].level, "warn");
    // What broke it, as the upstream client saw it (src/upstream/wire_client.ts: a body cut short).
    assert.match(
      warned[0].error,
      /^UpstreamProtocolFailure: upstream HTTP\/1\.1: connection closed before the end of the body/,
    );

    // A refusal before the hold: its status and code, no money; a bad key: no key id.
    const refused = await post(t.url + "/v1/chat/completions", key, {
      model: "k3",
      n: 2,
      messages: [{ role: "user", content: "x" }],
    });
    assert.equal(refused.status, 400);
    const r = await lineOf(lines, refused.headers.get("request-id")!);
    assert.deepEqual([r.status, r.code, r.key_id, r.charged_usd, r.upstream_ms], [
      400,
      "invalid_parameter",
      id,
      null,
      null,
    ]);
    const bad = await post(t.url + "/v1/chat/completions", "gd-wrong", { model: "k3", messages: [] });
    const b = await lineOf(lines, bad.headers.get("request-id")!);
    assert.deepEqual([b.status, b.code, b.key_id, b.family], [401, "invalid_api_key", null, null]);
    await bad.body?.cancel();
    const missing = await fetch(t.url + "/v1/nothing-here");
    const m = await lineOf(lines, missing.headers.get("request-id")!);
    assert.deepEqual([m.status, m.code, m.route, m.surface], [404, "route_not_found", null, "none"]);
    await missing.body?.cancel();

    // Probes and metrics are not logged; nothing logged carries the key or the admin token.
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(res.status, 200, path);
      assert.ok(!lines().some((l) => l.request_id === res.headers.get("request-id")), path);
      await res.body?.cancel();
    }
    const all = JSON.stringify(lines());
    assert.ok(!all.includes(key));
    assert.ok(!all.includes(ADMIN_TOKEN));
  }, { LOG_OK_GENERATIONS: "on" });
});

Deno.test("by default a generation that ended well writes no line, its usage row is its record; every other request does", async () => {
  await withLog(async (t, lines) => {
    const { id, key } = await t.newKey("5.00");
    const chat = (content: string, stream = false) =>
      post(t.url + "/v1/chat/completions", key, {
        model: "k3",
        max_tokens: 50,
        stream,
        messages: [{ role: "user", content }],
      });
    const ok = await chat("Привет [[sim:words=4]]");
    assert.equal(ok.status, 200);
    await ok.json();
    const okStream = await chat("Привет [[sim:words=6]]", true);
    assert.equal(okStream.status, 200);
    await okStream.text();
    // A stream cut by the upstream's error frame: billed as delivered, and logged with its code.
    const failed = await chat("Привет [[sim:fault=error_mid]] [[sim:words=10]]", true);
    assert.equal(failed.status, 200);
    await failed.text();
    const f = await lineOf(lines, failed.headers.get("request-id")!);
    assert.deepEqual([f.status, f.usage_status, typeof f.code], [200, "error", "string"]);
    // A refusal before the hold, and a route that bills nothing.
    const refused = await post(t.url + "/v1/chat/completions", key, {
      model: "k3",
      n: 2,
      messages: [{ role: "user", content: "x" }],
    });
    assert.equal(refused.status, 400);
    await refused.body?.cancel();
    assert.equal((await lineOf(lines, refused.headers.get("request-id")!)).code, "invalid_parameter");
    const models = await fetch(t.url + "/v1/models", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(models.status, 200);
    await models.body?.cancel();
    const m = await lineOf(lines, models.headers.get("request-id")!);
    assert.deepEqual([m.status, m.key_id, m.usage_status], [200, id, null]);

    // The two that ended well: written before the lines found above, and not there; their rows are.
    const quiet = [ok, okStream].map((r) => r.headers.get("request-id")!);
    assert.deepEqual(lines().filter((l) => l.msg === "request" && quiet.includes(l.request_id)), []);
    const { rows } = await t.gw.app.store.listUsage(id, { limit: 10 });
    assert.deepEqual(
      quiet.map((rid) => rows.find((r) => r.requestId === rid)?.status),
      ["ok", "ok"],
    );
  });
});

Deno.test("LOG_LEVEL=warn drops the request lines", async () => {
  await withLog(async (t, lines) => {
    const { key } = await t.newKey("1.00");
    const res = await fetch(t.url + "/v1/models", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.deepEqual(lines(), []);
  }, { LOG_LEVEL: "warn" });
});

Deno.test("LOG_LEVEL is validated at start-up", async () => {
  await assert.rejects(() => withGateway(() => Promise.resolve(), { LOG_LEVEL: "verbose" }), /LOG_LEVEL/);
});
