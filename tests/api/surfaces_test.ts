/** Every family answers on every surface through its native upstream protocol (issue: surfaces end to end). */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { parseConfig } from "../../src/config/env.ts";
import { startGateway } from "../../src/gateway.ts";
import { parseUsd } from "../../src/money/usd.ts";
import { ANTHROPIC_HEADERS, post, startTestGateway } from "../support/harness.ts";
import { SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";

const FAMILIES: [string, string, string][] = [
  ["alpha", "alpha-for-coding", "/v1/chat/completions"],
  ["beta", "beta-sonnet-5", "/v1/messages"],
  ["gamma", "gamma-2.5-fast", "/v1/responses"],
  ["eta", "delta-eta-4.6-xhigh", "/v1/responses"],
  ["theta", "theta3.6-plus", "/v1/chat/completions"],
];
const CYRILLIC = /[а-яё]/i;

Deno.test("non-streaming answers in each surface's shape for every family, via the family's upstream protocol", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("20.00");
    for (const [family, model, upstreamPath] of FAMILIES) {
      for (const surface of ["messages", "chat", "responses"] as const) {
        const where = `${family}/${surface}`;
        const res = await post(
          t.url + SURFACE_PATH[surface],
          k.key,
          surfaceBody(surface, model, "Расскажи [[sim:words=9]]", false),
          surface === "messages" ? ANTHROPIC_HEADERS : {},
        );
        const json = await res.json();
        assert.equal(res.status, 200, `${where}: ${JSON.stringify(json)}`);
        assert.equal(t.sim.requests.at(-1)!.path, upstreamPath, where);
        assert.equal(json.model, model, where);
        assert.match(res.headers.get("x-gateway-hold-usd") ?? "", /^\d+\.\d+$/, where);
        const alphaOpenAi = family === "alpha" && surface !== "messages";
        assert.equal(
          res.headers.get("x-request-id"),
          alphaOpenAi ? res.headers.get("request-id") : null,
          where,
        );
        if (surface === "messages") {
          assert.equal(json.type, "message", where);
          assert.equal(json.role, "assistant", where);
          assert.equal(json.stop_reason, "end_turn", where);
          assert.match(json.content[0].text, CYRILLIC, where);
          assert.ok(
            json.usage.input_tokens > 0 && json.usage.output_tokens === 9,
            `${where} ${JSON.stringify(json.usage)}`,
          );
        } else if (surface === "chat") {
          assert.equal(json.object, "chat.completion", where);
          assert.equal(json.choices[0].finish_reason, "stop", where);
          assert.match(json.choices[0].message.content, CYRILLIC, where);
          const u = json.usage;
          assert.equal(u.completion_tokens, 9, where);
          assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens, where);
        } else {
          assert.equal(json.object, "response", where);
          assert.equal(json.status, "completed", where);
          const msg = json.output.find((o: any) => o.type === "message");
          assert.match(msg.content[0].text, CYRILLIC, where);
          const u = json.usage;
          assert.equal(u.output_tokens, 9, where);
          assert.equal(u.total_tokens, u.input_tokens + u.output_tokens, where);
        }
      }
    }
  } finally {
    await t.close();
  }
});

Deno.test("stop reasons map across surfaces: output budget and tool calls", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("20.00");
    // gamma speaks Responses upstream; ask on Messages and Chat so the answer is translated.
    const m = await (await post(t.url + "/v1/messages", k.key, {
      model: "gamma-2.5",
      max_tokens: 4,
      messages: [{ role: "user", content: "Долго [[sim:words=40]]" }],
    }, ANTHROPIC_HEADERS)).json();
    assert.equal(m.stop_reason, "max_tokens");
    const c = await (await post(t.url + "/v1/chat/completions", k.key, {
      model: "beta-haiku-4-5",
      max_tokens: 4,
      messages: [{ role: "user", content: "Долго [[sim:words=40]]" }],
    })).json();
    assert.equal(c.choices[0].finish_reason, "length");
    const r = await (await post(t.url + "/v1/responses", k.key, {
      model: "k3",
      max_output_tokens: 4,
      input: "Долго [[sim:words=40]]",
    })).json();
    assert.equal(r.status, "incomplete");
    assert.equal(r.incomplete_details.reason, "max_output_tokens");
    const tool = {
      name: "get_weather",
      description: "Погода",
      input_schema: { type: "object", properties: { city: { type: "string" } } },
    };
    const mt = await (await post(t.url + "/v1/messages", k.key, {
      model: "k3",
      max_tokens: 100,
      tools: [tool],
      messages: [{ role: "user", content: "Погода? [[sim:tool]]" }],
    }, ANTHROPIC_HEADERS)).json();
    assert.equal(mt.stop_reason, "tool_use");
    const use = mt.content.find((b: any) => b.type === "tool_use");
    assert.equal(use.name, "get_weather");
    assert.equal(typeof use.input, "object");
    // The upstream (alpha: Chat Completions) received the tool in its own shape.
    const sent = t.sim.requests.at(-1)!.body as any;
    assert.equal(sent.tools[0].type, "function");
    assert.equal(sent.tools[0].function.name, "get_weather");
  } finally {
    await t.close();
  }
});

Deno.test("native pass-through keeps unknown fields for the upstream", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("5.00");
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      messages: [{ role: "user", content: "Привет" }],
      prompt_cache_key: "conv-1",
      vendor_extension: { nested: [1, "два"] },
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const sent = t.sim.requests.at(-1)!.body as any;
    assert.equal(sent.prompt_cache_key, "conv-1");
    assert.deepEqual(sent.vendor_extension, { nested: [1, "два"] });
  } finally {
    await t.close();
  }
});

Deno.test("count_tokens: local estimate, no upstream call, free, and a quote equal to the real hold", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("5.00");
    const body = {
      model: "beta-haiku-4-5",
      max_tokens: 300,
      messages: [{ role: "user", content: "Сколько токенов?" }],
    };
    for (const base of ["/v1", "/theta/v1"]) {
      const b = base === "/v1" ? body : { ...body, model: "theta3.7-plus" };
      const before = t.sim.requests.length;
      const res = await post(t.url + `${base}/messages/count_tokens`, k.key, b, ANTHROPIC_HEADERS);
      const json = await res.json();
      assert.equal(res.status, 200, JSON.stringify(json));
      assert.equal(res.headers.get("x-relay-usage-source"), "estimated");
      assert.ok(json.input_tokens > 0);
      assert.equal(t.sim.requests.length, before, "no upstream call");
      const real = await post(t.url + `${base}/messages`, k.key, b, ANTHROPIC_HEADERS);
      await real.body?.cancel();
      assert.equal(json.quote.reserve_usd, real.headers.get("x-gateway-hold-usd"));
    }
    const alpha = await (await post(t.url + "/v1/messages/count_tokens", k.key, {
      model: "k3",
      messages: [{ role: "user", content: "x" }],
    }, ANTHROPIC_HEADERS)).json();
    assert.deepEqual(alpha.quote.rates_usd_per_million, {
      input: "3.00",
      cache_read: "0.30",
      output: "15.00",
    });
    assert.equal(alpha.quote.output_budget_tokens, 32_000);
  } finally {
    await t.close();
  }
});

Deno.test("GET /v1/models lists the catalog in the OpenAI list shape with family and context window", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("1.00");
    const res = await fetch(t.url + "/v1/models", { headers: { authorization: `Bearer ${k.key}` } });
    const json = await res.json();
    assert.equal(res.status, 200);
    assert.equal(json.object, "list");
    assert.equal(json.data.length, 26); // 4 alpha + 5 beta + 2 gamma + 8 eta + 7 theta
    const k3 = json.data.find((m: any) => m.id === "k3");
    assert.deepEqual([k3.object, k3.owned_by, k3.family, k3.context_window], [
      "model",
      "alpha",
      "alpha",
      1_048_576,
    ]);
    assert.equal(typeof k3.created, "number");
    const nokey = await fetch(t.url + "/v1/models");
    assert.equal(nokey.status, 401);
    await nokey.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("demo mode serves every family from the simulator and marks responses; partial config gives 503", async () => {
  const demo = await startGateway(
    parseConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: "memory", LOG_LEVEL: "error" }),
    {
      simulator: await startSimulator({ hostname: "127.0.0.1" }),
    },
  );
  try {
    assert.equal(demo.app.simulated, true);
    const { key } = await demo.app.accounts.create({ balance: parseUsd("1.00") });
    const res = await post(demo.url + "/v1/chat/completions", key, {
      model: "theta3.8-max",
      messages: [{ role: "user", content: "Привет" }],
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-gateway-simulated"), "true");
    await res.body?.cancel();
  } finally {
    await demo.close();
  }
  const t = await startTestGateway({ BETA_UPSTREAM_URL: "", BETA_UPSTREAM_KEY: "" });
  try {
    assert.equal(t.gw.app.simulated, false);
    const k = await t.newKey("1.00");
    const res = await post(t.url + "/v1/messages", k.key, {
      model: "beta-opus-5",
      max_tokens: 5,
      messages: [{ role: "user", content: "x" }],
    }, ANTHROPIC_HEADERS);
    const json = await res.json();
    assert.equal(res.status, 503);
    assert.equal(json.error.code, "upstream_unavailable");
    assert.equal(res.headers.get("x-gateway-simulated"), null);
    const { json: view } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(view.spent_usd, "0.00");
  } finally {
    await t.close();
  }
});

Deno.test("native pass-through sends the client's own bytes when nothing had to change", async () => {
  const seen: string[] = [];
  const up = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    seen.push(await req.text());
    return Response.json({
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: "k3",
      choices: [{ index: 0, message: { role: "assistant", content: "Привет" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
  });
  const t = await startTestGateway({
    ALPHA_UPSTREAM_URL: `http://127.0.0.1:${(up.addr as Deno.NetAddr).port}`,
  });
  try {
    const k = await t.newKey("5.00");
    const raw =
      '{"model":"k3",  "messages":[{"role":"user","content":"\\u041f\\u0440\\u0438"}], "vendor_x":1.50}';
    const res = await post(t.url + "/v1/chat/completions", k.key, raw);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(seen[0], raw);
    // A rule that removes a field (temperature on alpha, §4.2) means a re-serialised body.
    const res2 = await post(
      t.url + "/v1/chat/completions",
      k.key,
      raw.replace('"vendor_x"', '"temperature":0.2, "vendor_x"'),
    );
    await res2.body?.cancel();
    assert.deepEqual(JSON.parse(seen[1]!), JSON.parse(raw));
    assert.notEqual(seen[1], raw);
  } finally {
    await t.close();
    await up.shutdown();
  }
});
