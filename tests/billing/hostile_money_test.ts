/**
 * Hostile inputs, money family (hardening issue, item 1 and 2): no input may drive a balance below zero
 * or charge more than its hold, whatever the body's shape or the upstream's behaviour.
 */
import assert from "node:assert/strict";
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { ANTHROPIC_HEADERS, post, startTestGateway, withGateway } from "../support/harness.ts";
import { readFrames } from "../support/sse_client.ts";
import { countingUpstream, fixedUpstream } from "../support/upstream_stubs.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function keyState(t: { admin: (m: string, p: string) => Promise<{ json: any }> }, id: string) {
  const { json } = await t.admin("GET", `/admin/keys/${id}`);
  return json as { balance_usd: string; held_usd: string; spent_usd: string };
}

/** The newest usage row of a key (the report flushes pending settlements first). */
async function lastRow(url: string, key: string) {
  const res = await fetch(url + "/v1/usage/requests?limit=1", {
    headers: { authorization: `Bearer ${key}` },
  });
  assert.equal(res.status, 200);
  return (await res.json()).data[0];
}

/** A JSON schema nested `levels` deep around one long description. */
function deepSchema(levels: number, description: string): unknown {
  let schema: unknown = { type: "string", description };
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { p: schema } };
  return schema;
}

Deno.test("money: text hidden deep in a tool schema is reserved for, so a small key is refused", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("0.05");
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "f", parameters: deepSchema(40, "x".repeat(600_000)) } }],
    });
    const json = await res.json();
    assert.equal(res.status, 402, JSON.stringify(json));
    assert.equal(json.error.code, "request_reserve_exceeds_credit");
    const s = await keyState(t, k.id);
    assert.equal(s.balance_usd, "0.05");
    assert.equal(s.spent_usd, "0.00");
  });
});

Deno.test("money: a body nested past 100 levels is refused with 400 before the reserve", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (
      const [path, body, headers] of [
        ["/v1/chat/completions", {
          model: "k3",
          messages: [{ role: "user", content: "hi" }],
          // The leaf object sits at level 5 + 2 × 48 = 101.
          tools: [{ type: "function", function: { name: "f", parameters: deepSchema(48, "d") } }],
        }, {}],
        ["/v1/messages", {
          model: "beta-haiku-4-5",
          max_tokens: 10,
          messages: [{ role: "user", content: "hi" }],
          tools: [{ name: "f", input_schema: deepSchema(5_000, "d") }],
        }, ANTHROPIC_HEADERS],
        ["/v1/messages/count_tokens", {
          model: "k3",
          messages: [{ role: "user", content: "hi" }],
          tools: [{ name: "f", input_schema: deepSchema(100, "d") }],
        }, ANTHROPIC_HEADERS],
      ] as const
    ) {
      const res = await post(t.url + path, k.key, body, headers);
      const json = await res.json();
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(json)}`);
      assert.equal(json.error.code, "invalid_request", path);
      assert.match(json.error.message, /Вложенность JSON глубже 100 уровней/, path);
    }
    // One wrapper less: the leaf at level 99 fits.
    const fits = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      max_tokens: 5,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "f", parameters: deepSchema(47, "d") } }],
    });
    assert.equal(fits.status, 200, await fits.text());
    const s = await keyState(t, k.id);
    assert.equal(s.held_usd, "0.00");
  });
});

Deno.test("money: usage beyond the hold is charged only up to the free balance, the rest written off", async () => {
  // An upstream that bills ten million prompt tokens for any request (30 USD at k3's rate).
  const up = fixedUpstream(() =>
    Response.json({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "k3",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10_000_000, completion_tokens: 1, total_tokens: 10_000_001 },
    })
  );
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("0.01");
      const res = await post(t.url + "/v1/chat/completions", k.key, {
        model: "k3",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      });
      assert.equal(res.status, 200);
      const hold = parseUsd(res.headers.get("x-gateway-hold-usd")!);
      const s = await keyState(t, k.id);
      assert.equal(s.balance_usd, "0.00", "never below zero");
      assert.equal(s.spent_usd, "0.01");
      const row = await lastRow(t.url, k.key);
      const price = 10_000_000n * 3_000_000n + 15_000_000n; // pico-USD: 3 and 15 USD per 1M tokens
      assert.equal(row.charged_usd, "0.01");
      assert.equal(row.written_off_usd, formatUsd(price - parseUsd("0.01")));
      assert.ok(hold < parseUsd("0.01"));
      // Nothing is left: the next request is refused, so an over-billing upstream cannot be ridden.
      const next = await post(t.url + "/v1/chat/completions", k.key, {
        model: "k3",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      });
      assert.equal(next.status, 402);
      assert.equal((await next.json()).error.code, "insufficient_credit");
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("money: parallel over-billed requests never take a balance below zero", async () => {
  const up = fixedUpstream(async () => {
    await sleep(50); // all requests hold before the first settles
    return Response.json({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "k3",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1_000_000, completion_tokens: 1, total_tokens: 1_000_001 },
    });
  });
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("0.02");
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          post(t.url + "/v1/chat/completions", k.key, {
            model: "k3",
            max_tokens: 10,
            messages: [{ role: "user", content: "hi" }],
          }).then(async (r) => (await r.body?.cancel(), r.status))),
      );
      assert.ok(results.includes(200));
      const s = await keyState(t, k.id);
      assert.equal(s.balance_usd, "0.00");
      assert.equal(s.held_usd, "0.00");
      assert.equal(s.spent_usd, "0.02");
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("money: an estimated charge stays within the output budget and the hold", async () => {
  await withGateway(async (t) => {
    for (const stream of [false, true]) {
      const body = {
        model: "k3",
        max_tokens: 1,
        stream,
        messages: [{ role: "user", content: "Привет [[sim:fault=no_usage]]" }],
      };
      // The quote is the hold: a key holding exactly it must end at zero, not below.
      const probe = await t.newKey("1.00");
      const q = await post(t.url + "/v1/messages/count_tokens", probe.key, { ...body, stream: undefined }, {
        ...ANTHROPIC_HEADERS,
      });
      const hold = (await q.json()).quote.reserve_usd as string;
      const k = await t.newKey(hold);
      const res = await post(t.url + "/v1/chat/completions", k.key, body);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-gateway-hold-usd"), hold);
      if (stream) await readFrames(res);
      else await res.json();
      const s = await keyState(t, k.id);
      assert.equal(s.held_usd, "0.00");
      assert.equal(s.spent_usd, hold, `stream=${stream}: one word estimated beyond max_tokens 1 is capped`);
      assert.equal(s.balance_usd, "0.00");
      const row = await lastRow(t.url, k.key);
      assert.equal(row.usage_source, "estimated");
      assert.equal(row.output_tokens, 1);
    }
  });
});

Deno.test("money: a stream request answered with a non-SSE 200 is a free 502 before the stream starts", async () => {
  const up = fixedUpstream(() =>
    new Response("<html><body>maintenance</body></html>", { headers: { "content-type": "text/html" } })
  );
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      for (const stream of [true, false]) {
        const res = await post(t.url + "/v1/chat/completions", k.key, {
          model: "k3",
          stream,
          messages: [{ role: "user", content: "hi" }],
        });
        const json = await res.json();
        assert.equal(res.status, 502, `stream=${stream}`);
        assert.equal(json.error.code, "upstream_invalid_response");
      }
      const s = await keyState(t, k.id);
      assert.equal(s.spent_usd, "0.00");
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("money: a stream that ends before any upstream event costs nothing", async () => {
  const up = fixedUpstream(() =>
    new Response(": just a comment\n\n", { headers: { "content-type": "text/event-stream" } })
  );
  try {
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      const res = await post(t.url + "/v1/chat/completions", k.key, {
        model: "k3",
        stream: true,
        messages: [{ role: "user", content: "hi" }],
      });
      assert.equal(res.status, 200);
      const { frames } = await readFrames(res);
      assert.equal(JSON.parse(frames.at(-2)!.data).error.code, "stream_service_error");
      const s = await keyState(t, k.id);
      assert.equal(s.spent_usd, "0.00");
      assert.equal(s.held_usd, "0.00");
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("money: the upstream headers timeout answers 504 upstream_timeout and costs nothing", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const model of ["k3", "beta-haiku-4-5", "gamma-2.5", "theta3.7-plus"]) {
      const res = await post(t.url + "/v1/chat/completions", k.key, {
        model,
        max_tokens: 10,
        // Gamma/eta's and theta's non-streaming requests wait for their head up to the run limit instead
        // (DELTA_RUN_TIMEOUT_MS, THETA_GENERATION_TIMEOUT_MS: tests/families/delta_run_limits_test.ts,
        // tests/families/theta_queue_test.ts); their streams keep the headers timeout. Alpha/beta's non-streaming
        // requests up to UPSTREAM_GENERATION_TIMEOUT_MS, the same free 504 (tests/api/json_generation_limit_test.ts).
        ...(model === "gamma-2.5" || model === "theta3.7-plus" ? { stream: true } : {}),
        messages: [{ role: "user", content: "hi [[sim:delay=2000]]" }],
      });
      const json = await res.json();
      assert.equal(res.status, 504, `${model}: ${JSON.stringify(json)}`);
      assert.equal(json.error.code, "upstream_timeout");
    }
    assert.equal((await keyState(t, k.id)).spent_usd, "0.00");
  }, { UPSTREAM_HEADERS_TIMEOUT_MS: "200", UPSTREAM_GENERATION_TIMEOUT_MS: "200" });
});

Deno.test("money: a client that stops reading is not mistaken for a silent upstream", async () => {
  const up = countingUpstream(200_000); // ≈ 25 MB: more than the socket buffers hold
  const t = await startTestGateway({ ALPHA_UPSTREAM_URL: up.url, STREAM_IDLE_TIMEOUT_MS: "300" });
  try {
    const k = await t.newKey("100.00");
    const res = await post(t.url + "/v1/chat/completions", k.key, {
      model: "k3",
      stream: true,
      messages: [{ role: "user", content: "долгий ответ" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    await sleep(1_500); // five idle limits without reading: backpressure stops the pipeline
    const producedWhilePaused = up.produced;
    assert.ok(
      producedWhilePaused < 20_000_000,
      `the pause must really stop the upstream (${producedWhilePaused})`,
    );
    const dec = new TextDecoder();
    let tail = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      tail = (tail + dec.decode(value, { stream: true })).slice(-4_000);
    }
    assert.doesNotMatch(tail, /stream_timeout/);
    assert.match(tail, /"finish_reason":"stop".*\n\ndata: \[DONE\]\n\n$/s);
  } finally {
    await t.close();
    await up.close();
  }
});

const prng = mulberry32; // a failing body is reproduced from the seed in the message

const ALPHABETS = ["abc xyz", "привет мир", "漢字かな", "😀🚀", '{}[]":,\\'];

function randomBodies(seed: number) {
  const rnd = prng(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const text = (max: number) => {
    const a = ALPHABETS[int(ALPHABETS.length)]!;
    let s = "";
    for (let n = int(max); n > 0; n--) s += a[int(a.length)];
    return s;
  };
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth <= 0 || r < 0.35) return text(300);
    if (r < 0.45) return int(1_000_000);
    if (r < 0.5) return rnd() < 0.5;
    if (r < 0.7) return Array.from({ length: int(6) }, () => value(depth - 1));
    return Object.fromEntries(Array.from({ length: int(6) }, () => [text(40) || "k", value(depth - 1)]));
  };
  const schema = () => ({ type: "object", properties: { p: value(int(rnd() < 0.1 ? 80 : 12)) } });
  const image = { type: "image_url", image_url: { url: "data:image/png;base64," + "A".repeat(int(50_000)) } };
  const surface = (["chat", "messages", "responses"] as const)[int(3)];
  const model = [
    "k3",
    "alpha-for-coding",
    "beta-haiku-4-5",
    "gamma-2.5",
    "delta-eta-4.6-low",
    "theta3.7-plus",
  ][
    int(6)
  ]!;
  const budget = rnd() < 0.3 ? undefined : 1 + int(300);
  const user = text(2_000) || "x";
  if (surface === "chat") {
    return {
      path: "/v1/chat/completions",
      headers: {},
      body: {
        model,
        ...(budget ? { max_tokens: budget } : {}),
        messages: [
          { role: "system", content: text(500) || "s" },
          { role: "user", content: rnd() < 0.3 ? [{ type: "text", text: user }, image] : user },
        ],
        ...(rnd() < 0.6
          ? {
            tools: [{
              type: "function",
              function: { name: "f", description: text(500), parameters: schema() },
            }],
          }
          : {}),
      },
    };
  }
  if (surface === "messages") {
    return {
      path: "/v1/messages",
      headers: ANTHROPIC_HEADERS,
      body: {
        model,
        max_tokens: budget ?? 1 + int(300),
        system: text(500) || "s",
        messages: [{ role: "user", content: user }],
        ...(rnd() < 0.6 ? { tools: [{ name: "f", description: text(500), input_schema: schema() }] } : {}),
      },
    };
  }
  return {
    path: "/v1/responses",
    headers: {},
    body: {
      model,
      ...(budget ? { max_output_tokens: budget } : {}),
      instructions: text(500) || "s",
      input: [{ role: "user", content: [{ type: "input_text", text: user }] }],
      ...(rnd() < 0.6
        ? { tools: [{ type: "function", name: "f", description: text(500), parameters: schema() }] }
        : {}),
    },
  };
}

Deno.test("money property: for random bodies the hold covers what the upstream bills, or the request is refused", async () => {
  await withGateway(async (t) => {
    let served = 0;
    const CASES = 120;
    for (let seed = 1; seed <= CASES; seed++) {
      const { path, headers, body } = randomBodies(seed);
      const balance = ["0.0005", "0.01", "1.00"][seed % 3]!;
      const k = await t.newKey(balance);
      const res = await post(t.url + path, k.key, body, headers);
      const where = `seed ${seed} ${path} ${body.model}: status ${res.status}`;
      if (res.status !== 200) {
        const json = await res.json();
        assert.ok([400, 402].includes(res.status), `${where} ${JSON.stringify(json).slice(0, 300)}`);
        const s = await keyState(t, k.id);
        assert.equal(s.spent_usd, "0.00", where);
        continue;
      }
      await res.text();
      served++;
      const row = await lastRow(t.url, k.key);
      assert.equal(row.usage_source, "upstream", where);
      assert.equal(row.written_off_usd, "0.00", `${where}: the upstream billed beyond the hold`);
      assert.ok(parseUsd(row.charged_usd) <= parseUsd(row.reserved_usd), where);
      assert.ok(parseUsd((await keyState(t, k.id)).balance_usd) >= 0n, where);
    }
    assert.ok(
      served >= CASES / 3,
      `only ${served} of ${CASES} were served: the property was barely exercised`,
    );
  });
});
