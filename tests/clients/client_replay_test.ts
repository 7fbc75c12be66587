/**
 * Replay of what Claude Code and Codex CLI send (fixtures in tests/fixtures/clients/, built from
 * ../shared/docs/client-request-shapes.md), two turns each, through the gateway on every family and route the
 * clients can use, with the official SDKs as the clients. Asserted: what the upstream receives, what the client
 * parses, and that nothing is refused unless the spec demands it (gamma/eta, spec §4.6: a clean refusal naming
 * the field, nothing charged).
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/env.ts";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type TestGateway, withGateway } from "../support/harness.ts";

const CLAUDE = JSON.parse(
  await Deno.readTextFile(new URL("../fixtures/clients/claude_code.json", import.meta.url)),
);
const CODEX = JSON.parse(await Deno.readTextFile(new URL("../fixtures/clients/codex.json", import.meta.url)));

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
/** Served routes: [model, base path prefix]. */
const SERVED: [string, string][] = [["beta-sonnet-5", ""], ["k3", ""], ["theta3.8-max", ""], [
  "theta3.8-max",
  "/theta",
]];
const REFUSED = ["gamma-2.5", "delta-eta-4.6-high"];

type Json = Record<string, any>;

function lastUpstream(t: TestGateway): { path: string; body: Json; headers: Record<string, string> } {
  const r = t.sim.requests.at(-1)!;
  return { path: r.path, body: r.body as Json, headers: r.headers as Record<string, string> };
}

/** Tool-call ids the upstream saw in a Chat or Messages body: [calls, results]. */
function upstreamCallIds(body: Json): [string[], string[]] {
  if (body.messages && body.messages.some((m: Json) => m.role === "tool" || m.tool_calls)) {
    return [
      body.messages.flatMap((m: Json) => m.tool_calls?.map((c: Json) => c.id) ?? []),
      body.messages.filter((m: Json) => m.role === "tool").map((m: Json) => m.tool_call_id),
    ];
  }
  const blocks = body.messages.flatMap((m: Json) => Array.isArray(m.content) ? m.content : []);
  return [
    blocks.filter((b: Json) => b.type === "tool_use").map((b: Json) => b.id),
    blocks.filter((b: Json) => b.type === "tool_result").map((b: Json) => b.tool_use_id),
  ];
}

async function held(t: TestGateway, id: string): Promise<Json> {
  return (await t.admin("GET", `/admin/keys/${id}`)).json;
}

Deno.test("Claude Code replay: two turns on beta (native), k3 and theta (/v1 and /theta) through the Anthropic SDK", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("5.00");
    for (const [model, prefix] of SERVED) {
      const where = `${model} ${prefix || "/v1"}`;
      const client = new Anthropic({
        apiKey: k.key,
        baseURL: t.url + prefix,
        maxRetries: 0,
        defaultHeaders: CLAUDE.headers,
      });
      const body = { ...CLAUDE.body, model };
      // The SDK's beta endpoint: POST /v1/messages?beta=true with the anthropic-beta header, as Claude Code sends.
      t.sim.requests.length = 0;
      const first = await client.beta.messages.stream({ ...body, betas: CLAUDE.betas } as any).finalMessage();
      const up = lastUpstream(t);
      if (model.startsWith("beta")) {
        assert.equal(up.path, "/v1/messages", where);
        // Unchanged but for beta's server prompt, a first system block of its own (spec §2.1).
        const prompt = { type: "text", text: parseConfig({}).BETA_SERVER_PROMPT };
        assert.deepEqual(
          up.body,
          { ...body, system: [prompt, ...body.system] },
          `${where}: the native body arrives unchanged (cache_control, system turn, betas' fields)`,
        );
        assert.equal(up.headers["anthropic-beta"], CLAUDE.betas.join(","), where);
      } else {
        assert.equal(up.path, "/v1/chat/completions", where);
        assert.deepEqual(up.body.messages.map((m: Json) => m.role), [
          "system",
          "system",
          "system",
          "user",
          "system",
        ], where);
        assert.deepEqual(
          up.body.tools.map((x: Json) => x.function.name),
          CLAUDE.body.tools.map((x: Json) => x.name),
          where,
        );
        assert.equal(up.body.max_completion_tokens, 32000, where);
        assert.equal(up.body.user, CLAUDE.body.metadata.user_id, where);
        assert.ok(
          !JSON.stringify(up.body).includes("cache_control"),
          `${where}: no cache_control on a Chat upstream`,
        );
        assert.equal(up.headers["anthropic-beta"], undefined, where);
      }
      assert.equal(first.model, model, where);
      assert.equal(first.stop_reason, "tool_use", where);
      const call = first.content.find((b) => b.type === "tool_use") as Json;
      assert.equal(call.name, "Agent", where);
      assert.match(call.id, TOOL_ID, where);

      // Turn 2: the answer goes back with the tool result (string system turn, cache_control on the result).
      t.sim.requests.length = 0;
      const second = await client.beta.messages.stream({
        ...body,
        betas: CLAUDE.betas,
        messages: [
          body.messages[0],
          { role: "system", content: body.messages[1].content[0].text },
          { role: "assistant", content: first.content },
          {
            role: "user",
            content: [{
              type: "tool_result",
              tool_use_id: call.id,
              content: "Агент запущен.",
              cache_control: { type: "ephemeral" },
            }],
          },
        ],
      } as any).finalMessage();
      const [calls, results] = upstreamCallIds(lastUpstream(t).body);
      assert.equal(calls.length, 1, where);
      assert.deepEqual(
        results,
        calls,
        `${where}: the call id the upstream sees is stable across the round trip`,
      );
      assert.equal(second.stop_reason, "end_turn", where);
      assert.match(
        (second.content.find((b) => b.type === "text") as Json).text,
        /Результат инструмента получен/,
        where,
      );
    }
    const key = await held(t, k.id);
    assert.equal(key.held_usd, "0.00");
    assert.notEqual(key.balance_usd, "5.00");
  });
});

Deno.test("Codex replay: two turns on k3 and theta (/v1 and /theta) and beta through the OpenAI SDK", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const namespaceCall = {
      type: "function_call",
      id: "fc_00000000000000000000000000000001",
      status: "completed",
      name: "spawn_agent",
      namespace: "multi_agent_v1",
      arguments: '{"message":"проверь тесты"}',
      call_id: "call_ns_1",
    };
    for (const [model, prefix] of SERVED) {
      const where = `${model} ${prefix || "/v1"}`;
      const client = new OpenAI({
        apiKey: k.key,
        baseURL: `${t.url}${prefix}/v1`,
        maxRetries: 0,
        defaultHeaders: CODEX.headers,
      });
      const body = { ...CODEX.body, model };
      t.sim.requests.length = 0;
      const stream = await client.responses.create(body as any) as unknown as AsyncIterable<Json>;
      const events: Json[] = [];
      for await (const e of stream) events.push(e);
      events.forEach((e, i) => {
        assert.equal(typeof e.type, "string", where);
        assert.equal(e.sequence_number, i, `${where}: sequence_number without gaps`);
      });
      assert.equal(events[0]!.type, "response.created", where);
      assert.equal(events.at(-1)!.type, "response.completed", where);
      const up = lastUpstream(t);
      if (model.startsWith("beta")) {
        assert.equal(up.path, "/v1/messages", where);
        assert.deepEqual(up.body.tools.at(-1), {
          type: "web_search_20250305",
          name: "web_search",
          max_uses: 5,
        }, where);
      } else {
        assert.equal(up.path, "/v1/chat/completions", where);
        assert.equal(up.body.prompt_cache_key, CODEX.body.prompt_cache_key, where);
        assert.deepEqual(
          up.body.messages.map((m: Json) => m.role),
          ["system", "system", "system", "user", "user"],
          where,
        );
        for (const f of ["store", "include", "client_metadata", "reasoning"]) {
          assert.equal(up.body[f], undefined, `${where} ${f}`);
        }
      }
      const names = up.body.tools.flatMap((x: Json) =>
        x.function?.name ?? (x.type === undefined ? [x.name] : [])
      );
      assert.deepEqual(names.slice(7), [
        "multi_agent_v1__close_agent",
        "multi_agent_v1__resume_agent",
        "multi_agent_v1__send_input",
        "multi_agent_v1__spawn_agent",
        "multi_agent_v1__wait_agent",
      ], where);
      const call = events.find((e) =>
        e.type === "response.output_item.done" && e.item.type === "function_call"
      )!.item;
      assert.equal(call.name, "exec_command", where);
      assert.equal(call.namespace, undefined, where);
      assert.match(call.call_id, TOOL_ID, where);

      // Turn 2: history echoes an earlier namespace call and this call (with item ids, store: false), plus outputs.
      t.sim.requests.length = 0;
      const next = await client.responses.create({
        ...body,
        stream: false,
        input: [
          ...body.input,
          namespaceCall,
          {
            type: "function_call_output",
            id: "fco_1",
            call_id: namespaceCall.call_id,
            output: "агент запущен",
          },
          call,
          { type: "function_call_output", id: "fco_2", call_id: call.call_id, output: "файл создан" },
        ],
      } as any) as unknown as Json;
      assert.equal(next.status, "completed", where);
      assert.match(next.output_text, /Результат инструмента получен/, where);
      const [calls, results] = upstreamCallIds(lastUpstream(t).body);
      assert.deepEqual(results, calls, where);
      assert.equal(calls.length, 2, where);
      const sentNames = JSON.stringify(lastUpstream(t).body.messages);
      assert.match(
        sentNames,
        /multi_agent_v1__spawn_agent/,
        `${where}: the namespace call travels under its flat name`,
      );
    }
    assert.equal((await held(t, k.id)).held_usd, "0.00");
  });
});

Deno.test("Claude Code and Codex on gamma/eta: a clean refusal naming the field, nothing sent or charged (spec §4.6)", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const claude = new Anthropic({
      apiKey: k.key,
      baseURL: t.url,
      maxRetries: 0,
      defaultHeaders: CLAUDE.headers,
    });
    const codex = new OpenAI({
      apiKey: k.key,
      baseURL: `${t.url}/v1`,
      maxRetries: 0,
      defaultHeaders: CODEX.headers,
    });
    for (const model of REFUSED) {
      const cases: [string, () => Promise<unknown>][] = [
        [
          "context_management",
          () => claude.beta.messages.create({ ...CLAUDE.body, model, betas: CLAUDE.betas } as any),
        ],
        ["parallel_tool_calls", () => codex.responses.create({ ...CODEX.body, model } as any)],
      ];
      for (const [param, send] of cases) {
        await assert.rejects(send(), (e: any) => {
          assert.equal(e.status, 400, `${model} ${param}`);
          const err = e.error?.error ?? e.error;
          assert.deepEqual([err.code, err.param], ["delta_parameter_unavailable", param], `${model}`);
          assert.match(err.message, new RegExp(param), "the printed message names the field");
          return true;
        });
      }
    }
    assert.equal(t.sim.requests.length, 0);
    const key = await held(t, k.id);
    assert.deepEqual([key.balance_usd, key.held_usd], ["5.00", "0.00"]);
  });
});
