/**
 * Traces (issue 17 item 6; docs/operator-guide.md "Traces"): a gateway process with Deno's built-in OpenTelemetry on
 * (`OTEL_DENO=true`) exports, over OTLP/HTTP JSON to a local collector, one `gateway.request` span per request
 * with its stages as children, carrying the request id, surface, family and model — never a key or the
 * prompt. The process flushes its spans when it exits (SIGTERM).
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { admin, freePort, spawnGateway, waitReady } from "../support/gateway_process.ts";

const SECRET_PROMPT = "TRACE-SECRET-PROMPT-9d1c4e";

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v && Object.values(v)[0];
}

Deno.test("with OTEL_DENO=true each request is a gateway.request span with its stages, ids but no content", async () => {
  const bodies: string[] = [];
  const collector = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const text = await req.text();
    if (new URL(req.url).pathname === "/v1/traces") bodies.push(text);
    return Response.json({});
  });
  const sim = await startSimulator();
  const dataDir = await Deno.makeTempDir();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawnGateway(port, dataDir, sim.url, {
    BETA_UPSTREAM_URL: sim.url,
    BETA_UPSTREAM_KEY: "k",
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.addr.port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_DENO_CONSOLE: "ignore",
    OTEL_SERVICE_NAME: "gateway-test",
    LOG_LEVEL: "error",
  });
  let key = "";
  const ids: Record<string, string> = {};
  try {
    await waitReady(url);
    key = (await admin(url, "POST", "/admin/keys", { balance_usd: "5.00" })).key;
    const call = async (name: string, body: unknown) => {
      const res = await fetch(url + "/v1/messages", {
        method: "POST",
        headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await res.text();
      ids[name] = res.headers.get("request-id")!;
      return res.status;
    };
    const messages = [{ role: "user", content: `Привет, это длинный вступительный текст: ${SECRET_PROMPT}` }];
    assert.equal(
      await call("stream", { model: "beta-haiku-4-5", max_tokens: 50, stream: true, messages }),
      200,
    );
    assert.equal(await call("json", { model: "k3", max_tokens: 50, messages }), 200);
    assert.equal(await call("refused", { model: "nope", max_tokens: 50, messages }), 404);
  } finally {
    proc.kill("SIGTERM");
    await proc.status;
    await sim.close();
    await collector.shutdown();
    await Deno.remove(dataDir, { recursive: true });
  }
  const all = bodies.join("\n");
  assert.ok(!all.includes(SECRET_PROMPT), "the prompt is never in a span");
  assert.ok(key !== "" && !all.includes(key), "the key is never in a span");
  const spans: OtlpSpan[] = bodies.flatMap((b) =>
    JSON.parse(b).resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans))
  );
  const root = (name: string) => {
    const found = spans.filter((s) =>
      s.name === "gateway.request" && attr(s, "gateway.request_id") === ids[name]
    );
    assert.equal(found.length, 1, `one request span for ${name}: ${spans.map((s) => s.name)}`);
    return found[0]!;
  };
  const children = (r: OtlpSpan) =>
    spans.filter((s) => s.parentSpanId === r.spanId && s.traceId === r.traceId).map((s) => s.name).sort();

  const stream = root("stream");
  assert.equal(attr(stream, "gateway.family"), "beta");
  assert.equal(attr(stream, "gateway.model"), "beta-haiku-4-5");
  assert.equal(attr(stream, "gateway.surface"), "anthropic");
  assert.deepEqual(children(stream), [
    "gateway.auth",
    "gateway.reserve",
    "gateway.rules",
    "gateway.settle",
    "gateway.stream",
    "gateway.upstream_first_byte",
  ]);
  const json = root("json");
  assert.equal(attr(json, "gateway.model"), "k3");
  assert.deepEqual(children(json), [
    "gateway.auth",
    "gateway.reserve",
    "gateway.rules",
    "gateway.settle",
    "gateway.upstream_first_byte",
  ]);
  const refused = root("refused");
  assert.equal(attr(refused, "gateway.error_code"), "model_not_found");
  assert.equal(String(attr(refused, "http.response.status_code")), "404");
  assert.deepEqual(children(refused), ["gateway.auth"]);
});
