/**
 * Family alpha's contract (§4.2, §2.5, §2.6, §6.3, §7.3 note, §8.1) against a real gateway and the
 * simulator. One table row per §4.2 rule: an accepted value is checked in what the simulator
 * received (`t.sim.requests.at(-1).body`), a refused one by status, code, `param`, the alpha reason in
 * the message, and by nothing reaching the simulator.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { estimateInputTokens } from "../../src/billing/estimate.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { readFrames } from "../support/sse_client.ts";

type Surface = "chat" | "responses" | "messages";
const PATH: Record<Surface, string> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};
const ALPHA = ["k3", "k3-256k", "alpha-for-coding", "alpha-for-coding-highspeed"] as const;
const CODING = ["alpha-for-coding", "alpha-for-coding-highspeed"] as const;
const PROMPT = "Привет [[sim:words=3]]";
const TOOLS = [{
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
}];

/** §8.1 alpha tariff in pico-USD per token: input, cache read, output. */
const RATES: Record<string, [bigint, bigint, bigint]> = {
  "k3": [3_000_000n, 300_000n, 15_000_000n],
  "k3-256k": [3_000_000n, 300_000n, 15_000_000n],
  "alpha-for-coding": [950_000n, 190_000n, 4_000_000n],
  "alpha-for-coding-highspeed": [1_900_000n, 380_000n, 8_000_000n],
};
const price = (model: string, prompt: number, cached: number, output: number) => {
  const [i, c, o] = RATES[model]!;
  return BigInt(prompt - cached) * i + BigInt(cached) * c + BigInt(output) * o;
};

function baseBody(surface: Surface, model: string): Record<string, unknown> {
  if (surface === "responses") return { model, input: PROMPT };
  if (surface === "messages") {
    return { model, max_tokens: 100, messages: [{ role: "user", content: PROMPT }] };
  }
  return { model, messages: [{ role: "user", content: PROMPT }] };
}

interface Row {
  rule: string;
  models?: readonly string[];
  surface?: Surface;
  body: Record<string, unknown>;
  /** Accepted: fields the upstream must not receive. */
  absent?: string[];
  /** Accepted: fields the upstream must receive byte-equal to what the client sent. */
  same?: string[];
  /** Accepted (translated surfaces): fields the upstream must receive with these values. */
  equal?: Record<string, unknown>;
  /** Refused: 400 with this code and param. */
  error?: [code: string, param: string];
}

const ROWS: Row[] = [
  // open field list
  {
    rule: "unknown field forwarded unchanged",
    models: ALPHA,
    body: { x_vendor: { a: [1, "б", null] } },
    same: ["x_vendor"],
  },
  // messages
  { rule: "messages non-empty", body: { messages: [] }, error: ["invalid_request", "messages"] },
  { rule: "messages not null", body: { messages: null }, error: ["invalid_request", "messages"] },
  // output budget
  { rule: "max_tokens positive integer", body: { max_tokens: 64 }, same: ["max_tokens"] },
  {
    rule: "max_tokens positive integer",
    body: { max_tokens: 0 },
    error: ["invalid_parameter", "max_tokens"],
  },
  {
    rule: "max_completion_tokens positive integer",
    body: { max_completion_tokens: 64 },
    same: ["max_completion_tokens"],
  },
  {
    rule: "max_completion_tokens positive integer",
    body: { max_completion_tokens: 1.5 },
    error: ["invalid_parameter", "max_completion_tokens"],
  },
  // stream, stream_options
  { rule: "stream boolean", body: { stream: false }, same: ["stream"] },
  { rule: "stream boolean", body: { stream: "yes" }, error: ["invalid_request", "stream"] },
  {
    rule: "stream_options only include_usage",
    body: { stream: true, stream_options: { include_usage: true } },
    same: ["stream_options"],
  },
  {
    rule: "stream_options.include_usage boolean",
    body: { stream: true, stream_options: { include_usage: "yes" } },
    error: ["invalid_parameter", "stream_options.include_usage"],
  },
  {
    rule: "stream_options no other key",
    body: { stream: true, stream_options: { include_usage: true, include_obfuscation: false } },
    error: ["unsupported_parameter", "stream_options.include_obfuscation"],
  },
  // temperature, top_p
  {
    rule: "temperature/top_p removed on Chat",
    models: ALPHA,
    body: { temperature: 0.7, top_p: 0.9 },
    absent: ["temperature", "top_p"],
  },
  { rule: "temperature removed whatever the value", body: { temperature: 7 }, absent: ["temperature"] },
  {
    rule: "temperature/top_p removed on Responses",
    models: ALPHA,
    surface: "responses",
    body: { temperature: 0.7, top_p: 0.9 },
    absent: ["temperature", "top_p"],
  },
  {
    rule: "temperature/top_p pass through on Messages",
    models: ALPHA,
    surface: "messages",
    body: { temperature: 0.7, top_p: 0.9 },
    equal: { temperature: 0.7, top_p: 0.9 },
  },
  // top_k
  { rule: "top_k positive integer", body: { top_k: 40 }, same: ["top_k"] },
  { rule: "top_k positive integer", body: { top_k: 0 }, error: ["invalid_parameter", "top_k"] },
  { rule: "top_k positive integer", body: { top_k: 2.5 }, error: ["invalid_parameter", "top_k"] },
  // penalties, n
  { rule: "frequency_penalty only 0", body: { frequency_penalty: 0 }, same: ["frequency_penalty"] },
  {
    rule: "frequency_penalty only 0",
    body: { frequency_penalty: 0.5 },
    error: ["invalid_parameter", "frequency_penalty"],
  },
  { rule: "presence_penalty only 0", body: { presence_penalty: 0 }, same: ["presence_penalty"] },
  {
    rule: "presence_penalty only 0",
    body: { presence_penalty: -1 },
    error: ["invalid_parameter", "presence_penalty"],
  },
  { rule: "n only 1", body: { n: 1 }, same: ["n"] },
  { rule: "n only 1", body: { n: 2 }, error: ["invalid_parameter", "n"] },
  // tools
  {
    rule: "tools, tool_choice, parallel_tool_calls accepted",
    models: ALPHA,
    body: { tools: TOOLS, tool_choice: "auto", parallel_tool_calls: false },
    same: ["tools", "tool_choice", "parallel_tool_calls"],
  },
  {
    rule: "tool_choice required on k3 models",
    models: ["k3", "k3-256k"],
    body: { tools: TOOLS, tool_choice: "required" },
    same: ["tools", "tool_choice"],
  },
  {
    rule: "tool_choice required refused by coding models",
    models: CODING,
    body: { tools: TOOLS, tool_choice: "required" },
    error: ["invalid_parameter", "tool_choice"],
  },
  {
    rule: "tool_choice required refused by coding models (Responses)",
    models: CODING,
    surface: "responses",
    body: {
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }],
      tool_choice: "required",
    },
    error: ["invalid_parameter", "tool_choice"],
  },
  {
    rule: "tool_choice any refused by coding models (Messages)",
    models: CODING,
    surface: "messages",
    body: {
      tools: [{ name: "get_weather", input_schema: { type: "object" } }],
      tool_choice: { type: "any" },
    },
    error: ["invalid_parameter", "tool_choice"],
  },
  // reasoning_effort
  {
    rule: "reasoning_effort any non-empty string, as sent",
    models: ALPHA,
    body: { reasoning_effort: "whatever-level" },
    same: ["reasoning_effort"],
  },
  {
    rule: "reasoning_effort documented level",
    body: { reasoning_effort: "max" },
    same: ["reasoning_effort"],
  },
  {
    rule: "reasoning_effort non-empty",
    body: { reasoning_effort: "" },
    error: ["invalid_parameter", "reasoning_effort"],
  },
  {
    rule: "reasoning_effort a string",
    body: { reasoning_effort: 3 },
    error: ["invalid_parameter", "reasoning_effort"],
  },
  {
    rule: "reasoning.effort forwarded as is (Responses)",
    models: ALPHA,
    surface: "responses",
    body: { reasoning: { effort: "max" } },
    equal: { reasoning_effort: "max" },
  },
  {
    rule: "reasoning.effort non-empty (Responses)",
    surface: "responses",
    body: { reasoning: { effort: "" } },
    error: ["invalid_parameter", "reasoning.effort"],
  },
  // thinking
  {
    rule: "thinking exactly {enabled, all} on coding models",
    models: CODING,
    body: { thinking: { type: "enabled", keep: "all" } },
    same: ["thinking"],
  },
  {
    rule: "thinking only on coding models",
    models: ["k3", "k3-256k"],
    body: { thinking: { type: "enabled", keep: "all" } },
    error: ["unsupported_parameter", "thinking"],
  },
  {
    rule: "thinking exactly that object",
    models: CODING,
    body: { thinking: { type: "enabled" } },
    error: ["invalid_parameter", "thinking"],
  },
  {
    rule: "thinking nothing more",
    models: CODING,
    body: { thinking: { type: "enabled", keep: "all", budget_tokens: 100 } },
    error: ["invalid_parameter", "thinking"],
  },
  {
    rule: "thinking disabled refused",
    body: { model: "alpha-for-coding", thinking: { type: "disabled" } },
    error: ["invalid_parameter", "thinking"],
  },
  // accepted and forwarded
  {
    rule: "response_format, stop, partial, prompt_cache_key forwarded",
    body: {
      response_format: { type: "json_object" },
      stop: ["КОНЕЦ"],
      partial: true,
      prompt_cache_key: "pk-1",
    },
    same: ["response_format", "stop", "partial", "prompt_cache_key"],
  },
  {
    rule: "user … verbosity forwarded",
    body: {
      user: "u-1",
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { "50256": -100 },
      modalities: ["text"],
      audio: { voice: "alloy", format: "wav" },
      web_search_options: { search_context_size: "low" },
      reasoning: { effort: "low" },
      verbosity: "low",
    },
    same: [
      "user",
      "logprobs",
      "top_logprobs",
      "logit_bias",
      "modalities",
      "audio",
      "web_search_options",
      "reasoning",
      "verbosity",
    ],
  },
  // shape checked, then forwarded
  { rule: "seed integer", body: { seed: -42 }, same: ["seed"] },
  { rule: "seed integer", body: { seed: 1.5 }, error: ["invalid_parameter", "seed"] },
  { rule: "metadata string values", body: { metadata: { a: "b", c: "" } }, same: ["metadata"] },
  {
    rule: "metadata string values",
    body: { metadata: { a: 1 } },
    error: ["invalid_parameter", "metadata.a"],
  },
  { rule: "metadata an object", body: { metadata: ["a"] }, error: ["invalid_parameter", "metadata"] },
  {
    rule: "metadata at most 16 keys",
    body: { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) },
    error: ["invalid_parameter", "metadata"],
  },
  {
    rule: "prediction content string or text parts",
    body: { prediction: { type: "content", content: [{ type: "text", text: "x" }] } },
    same: ["prediction"],
  },
  {
    rule: "prediction type content",
    body: { prediction: { type: "text", content: "x" } },
    error: ["invalid_parameter", "prediction.type"],
  },
  {
    rule: "prediction content required",
    body: { prediction: { type: "content" } },
    error: ["invalid_parameter", "prediction.content"],
  },
  { rule: "service_tier auto", body: { service_tier: "auto" }, same: ["service_tier"] },
  { rule: "service_tier priority", body: { service_tier: "priority" }, same: ["service_tier"] },
  {
    rule: "service_tier other",
    body: { service_tier: "flex" },
    error: ["invalid_parameter", "service_tier"],
  },
  {
    rule: "service_tier other (Responses)",
    surface: "responses",
    body: { service_tier: "flex" },
    error: ["invalid_parameter", "service_tier"],
  },
  { rule: "store only false", body: { store: false }, same: ["store"] },
  { rule: "store only false", body: { store: true }, error: ["invalid_parameter", "store"] },
  {
    rule: "store only false (Responses)",
    surface: "responses",
    body: { store: true },
    error: ["invalid_parameter", "store"],
  },
  { rule: "safety_identifier string", body: { safety_identifier: "s-1" }, same: ["safety_identifier"] },
  {
    rule: "safety_identifier string",
    body: { safety_identifier: 5 },
    error: ["invalid_parameter", "safety_identifier"],
  },
];

const spentUsd = async (t: TestGateway, id: string) =>
  (await t.admin("GET", `/admin/keys/${id}`)).json.spent_usd;

Deno.test("§4.2 table: every alpha rule, accepted values as the simulator received them, refusals by code and param", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("50.00");
    for (const row of ROWS) {
      const surface = row.surface ?? "chat";
      for (const model of row.models ?? ["k3"]) {
        const body = { ...baseBody(surface, model), ...row.body };
        const where = `${row.rule} [${model} ${surface}] ${JSON.stringify(row.body)}`;
        const before = t.sim.requests.length;
        const spent = row.error ? await spentUsd(t, k.id) : "";
        const res = await post(
          t.url + PATH[surface],
          k.key,
          body,
          surface === "messages" ? ANTHROPIC_HEADERS : {},
        );
        const text = await res.text();
        // §2.5: alpha names the request in x-request-id too, on Chat and Responses, errors included.
        const xrid = res.headers.get("x-request-id");
        assert.equal(
          xrid,
          surface === "messages" ? null : res.headers.get("request-id"),
          `${where}: x-request-id`,
        );
        if (row.error) {
          const json = JSON.parse(text);
          const err = surface === "messages" ? json.error : json.error;
          assert.equal(res.status, 400, `${where}: ${text}`);
          assert.equal(err.code, row.error[0], `${where}: ${text}`);
          assert.equal(err.param, row.error[1], `${where}: ${text}`);
          assert.match(err.message, /alpha/, `${where}: the message names the alpha rule: ${err.message}`);
          assert.equal(t.sim.requests.length, before, `${where}: nothing reaches the provider`);
          assert.equal(await spentUsd(t, k.id), spent, `${where}: nothing billed`);
          continue;
        }
        assert.equal(res.status, 200, `${where}: ${text.slice(0, 400)}`);
        assert.equal(t.sim.requests.length, before + 1, where);
        const sent = t.sim.requests.at(-1)!.body as Record<string, unknown>;
        assert.equal(sent.model, model, where);
        for (const f of row.absent ?? []) {
          assert.equal(f in sent, false, `${where}: ${f} reached the provider`);
        }
        for (const f of row.same ?? []) {
          assert.equal(
            JSON.stringify(sent[f]),
            JSON.stringify(body[f]),
            `${where}: ${f} not forwarded as sent`,
          );
        }
        for (const [f, v] of Object.entries(row.equal ?? {})) assert.deepEqual(sent[f], v, `${where}: ${f}`);
      }
    }
  });
});

Deno.test("max_tokens / max_completion_tokens form the output part of the reserve (§8.1 p.2)", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const hold = async (extra: Record<string, unknown>) => {
      const body = { ...baseBody("chat", "alpha-for-coding"), ...extra };
      const res = await post(t.url + PATH.chat, k.key, body);
      assert.equal(res.status, 200, await res.text());
      return { got: res.headers.get("x-gateway-hold-usd"), input: estimateInputTokens(body) };
    };
    const [i, , o] = RATES["alpha-for-coding"]!;
    for (const extra of [{ max_tokens: 1000 }, { max_completion_tokens: 1000 }, {}]) {
      const { got, input } = await hold(extra);
      const budget = "max_tokens" in extra || "max_completion_tokens" in extra ? 1000 : 32_000;
      assert.equal(got, formatUsd(BigInt(input) * i + BigInt(budget) * o), JSON.stringify(extra));
    }
  });
});

Deno.test("context windows per alpha model (§2.1): estimate + budget over the window → 400, nothing sent or billed", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("50.00");
    const big = { role: "user", content: "я".repeat(800_000) }; // ≈ 266,700 estimated tokens
    const windows: Record<string, number> = {
      "k3": 1_048_576,
      "k3-256k": 262_144,
      "alpha-for-coding": 262_144,
      "alpha-for-coding-highspeed": 262_144,
    };
    for (const model of ALPHA) {
      const body = { model, messages: [big], max_tokens: 16 };
      assert.ok(estimateInputTokens(body) > 262_144 && estimateInputTokens(body) < 1_048_576);
      const before = t.sim.requests.length;
      const spent = await spentUsd(t, k.id);
      const res = await post(t.url + PATH.chat, k.key, body);
      const json = await res.json();
      if (windows[model]! > 262_144) {
        assert.equal(res.status, 200, `${model}: ${JSON.stringify(json).slice(0, 300)}`);
        continue;
      }
      assert.equal(res.status, 400, model);
      assert.equal(json.error.code, "context_length_exceeded", model);
      assert.equal(t.sim.requests.length, before, model);
      assert.equal(await spentUsd(t, k.id), spent, model);
    }
    // The output budget counts: an input that fits k3-256k alone no longer fits with 30,000 more.
    const fits = { model: "k3-256k", messages: [{ role: "user", content: "я".repeat(700_000) }] };
    assert.ok(estimateInputTokens(fits) + 30_000 > 262_144 && estimateInputTokens(fits) < 262_144);
    const over = await post(t.url + PATH.chat, k.key, { ...fits, max_tokens: 30_000 });
    assert.equal(over.status, 400);
    assert.equal((await over.json()).error.code, "context_length_exceeded");
    const ok = await post(t.url + PATH.chat, k.key, { ...fits, max_tokens: 100 });
    assert.equal(ok.status, 200, await ok.text());
  });
});

async function requestRow(t: TestGateway, key: string, requestId: string) {
  const res = await fetch(`${t.url}/v1/usage/requests?limit=100`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const json = await res.json();
  const row = json.data.find((r: any) => r.request_id === requestId);
  assert.ok(row, `no usage row for ${requestId}`);
  return row;
}

Deno.test("cached tokens reach the client and are priced at the cache-read rate (§2.6, §8.1 p.1)", async () => {
  await withGateway(async (t) => {
    for (const model of ["k3", "alpha-for-coding", "alpha-for-coding-highspeed"]) {
      const k = await t.newKey("5.00");
      const client = new OpenAI({ apiKey: k.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
      const messages = [{
        role: "user" as const,
        content: "Расскажи о кэше, пожалуйста [[sim:cached=6]] [[sim:words=5]]",
      }];
      const { data: r, response } = await client.chat.completions.create({ model, messages }).withResponse();
      const u = r.usage!;
      assert.equal(u.prompt_tokens_details?.cached_tokens, 6, JSON.stringify(u));
      assert.equal(u.completion_tokens, 5);
      const expected = price(model, u.prompt_tokens, 6, 5);
      const row = await requestRow(t, k.key, response.headers.get("request-id")!);
      assert.equal(row.cached_input_tokens, 6);
      assert.equal(row.input_tokens, u.prompt_tokens);
      assert.equal(parseUsd(row.charged_usd), expected, `${model}: ${JSON.stringify(row)}`);
      assert.equal(parseUsd(await spentUsd(t, k.id)), expected);
      // Cheaper than the same prompt without a cache hit.
      assert.ok(expected < price(model, u.prompt_tokens, 0, 5));
    }
  });
});

Deno.test("streaming through the openai SDK: without include_usage no usage, with it one usage frame with cached tokens; settled once", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const client = new OpenAI({ apiKey: k.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const messages = [{
      role: "user" as const,
      content: "Поток, пожалуйста [[sim:cached=3]] [[sim:words=6]]",
    }];

    const plain = await client.chat.completions.create({ model: "k3", messages, stream: true })
      .withResponse();
    let text = "";
    for await (const c of plain.data) {
      assert.equal(c.usage ?? null, null, `no usage without include_usage: ${JSON.stringify(c)}`);
      text += c.choices[0]?.delta?.content ?? "";
    }
    assert.match(text, /[а-яё]/i);
    // The gateway asked the provider for usage anyway: billed from it, not estimated.
    const plainRow = await requestRow(t, k.key, plain.response.headers.get("request-id")!);
    assert.equal(plainRow.usage_source, "upstream");
    assert.equal(plainRow.output_tokens, 6);
    assert.equal(plainRow.cached_input_tokens, 3);
    assert.equal((t.sim.requests.at(-1)!.body as any).stream_options?.include_usage, true);

    const spentBefore = parseUsd(await spentUsd(t, k.id));
    const withUsage = await client.chat.completions.create({
      model: "k3",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    }).withResponse();
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of withUsage.data) chunks.push(c);
    const usageFrames = chunks.filter((c) => c.usage);
    assert.equal(usageFrames.length, 1, JSON.stringify(usageFrames));
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, [], "the usage frame is a separate final frame");
    assert.equal(last.usage!.prompt_tokens_details?.cached_tokens, 3);
    assert.equal(last.usage!.completion_tokens, 6);
    const row = await requestRow(t, k.key, withUsage.response.headers.get("request-id")!);
    const expected = price("k3", last.usage!.prompt_tokens, 3, 6);
    assert.equal(parseUsd(row.charged_usd), expected);
    assert.equal(parseUsd(await spentUsd(t, k.id)) - spentBefore, expected, "charged once");
  });
});

/** A provider that reports the same usage twice in a stream: on the final chunk and in a usage frame (§6.3). */
function doubleUsageProvider() {
  const usage = {
    prompt_tokens: 1000,
    completion_tokens: 20,
    total_tokens: 1020,
    prompt_tokens_details: { cached_tokens: 400 },
  };
  const chunk = (extra: Record<string, unknown>) =>
    `data: ${
      JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "k3", ...extra })
    }\n\n`;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    const body = chunk({
      choices: [{ index: 0, delta: { role: "assistant", content: "Привет" }, finish_reason: null }],
    }) +
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage }) +
      chunk({ choices: [], usage }) + "data: [DONE]\n\n";
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  return { server, usage, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test("usage reported twice in an alpha stream is settled once (§6.3)", async () => {
  const p = doubleUsageProvider();
  try {
    await withGateway(async (t) => {
      for (const includeUsage of [true, false]) {
        const k = await t.newKey("5.00");
        const res = await post(t.url + PATH.chat, k.key, {
          model: "k3",
          messages: [{ role: "user", content: "x" }],
          stream: true,
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
        });
        const { frames } = await readFrames(res);
        const data = frames.map((f) => f.data).filter((d) => d !== "[DONE]").map((d) => JSON.parse(d));
        const withUsage = data.filter((d) => d.usage);
        assert.equal(withUsage.length, includeUsage ? 2 : 0, JSON.stringify(data));
        const expected = price("k3", 1000, 400, 20);
        const row = await requestRow(t, k.key, res.headers.get("request-id")!);
        assert.equal(parseUsd(row.charged_usd), expected, JSON.stringify(row));
        assert.equal(parseUsd(await spentUsd(t, k.id)), expected);
      }
    }, { ALPHA_UPSTREAM_URL: p.url });
  } finally {
    await p.server.shutdown();
  }
});

Deno.test("alpha provider errors: 429 → alpha_provider_rate_limit with Retry-After; unavailable → alpha_unavailable, also in a stream", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("5.00");
    for (const surface of ["chat", "responses", "messages"] as const) {
      const body = baseBody(surface, "k3");
      const user = "x [[sim:fault=status:429]]";
      if (surface === "responses") body.input = user;
      else body.messages = [{ role: "user", content: user }];
      const res = await post(
        t.url + PATH[surface],
        k.key,
        body,
        surface === "messages" ? ANTHROPIC_HEADERS : {},
      );
      const json = await res.json();
      assert.equal(res.status, 429, surface);
      assert.equal(json.error.code, "alpha_provider_rate_limit", surface);
      assert.equal(json.error.type, "rate_limit_error", surface);
      assert.equal(res.headers.get("retry-after"), "1", surface);
    }
    const down = await post(t.url + PATH.chat, k.key, {
      model: "k3",
      messages: [{ role: "user", content: "x [[sim:fault=status:503]]" }],
    });
    assert.equal(down.status, 503);
    const dj = await down.json();
    assert.equal(dj.error.code, "alpha_unavailable");
    assert.equal(dj.error.type, "api_error");
    const mid = await post(t.url + PATH.chat, k.key, {
      model: "k3",
      stream: true,
      messages: [{ role: "user", content: "x [[sim:fault=error_mid]] [[sim:words=10]]" }],
    });
    assert.equal(mid.status, 200);
    const { frames } = await readFrames(mid);
    assert.equal(frames.at(-1)!.data, "[DONE]");
    const err = JSON.parse(frames.at(-2)!.data);
    assert.equal(err.error.code, "alpha_unavailable");
    assert.equal(err.error.type, "api_error");
    assert.equal(err.request_id, mid.headers.get("x-request-id"));
  });
});
