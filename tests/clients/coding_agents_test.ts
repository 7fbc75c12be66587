/**
 * What coding agents (Claude Code, Codex CLI) send, through the gateway (the coding-agents issue; shapes in
 * ../shared/docs/client-request-shapes.md). Each test names the client behaviour it keeps working.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { ANTHROPIC_HEADERS, post, withGateway } from "../support/harness.ts";
import { readFrames } from "../support/sse_client.ts";

Deno.test("Codex: prompt_cache_key survives Responses → Chat translation (k3 and theta), spec §4.2", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const model of ["k3", "theta3.8-max"]) {
      t.sim.requests.length = 0;
      const res = await post(t.url + "/v1/responses", k.key, {
        model,
        input: "hi",
        max_output_tokens: 20,
        prompt_cache_key: "019a-session-1",
      });
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
      const sent = t.sim.requests.at(-1)!;
      assert.equal(sent.path, "/v1/chat/completions", model);
      assert.equal((sent.body as Record<string, unknown>).prompt_cache_key, "019a-session-1", model);
    }
  });
});

Deno.test("Claude Code: a translated Messages stream starts with the gateway's input estimate, not 0", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const body = {
      model: "k3",
      max_tokens: 20,
      messages: [{ role: "user", content: "Сколько будет два плюс два? ".repeat(20) }],
    };
    const quote = await post(t.url + "/v1/messages/count_tokens", k.key, body, ANTHROPIC_HEADERS);
    const estimate = (await quote.json()).input_tokens as number;
    assert.ok(estimate > 50);
    const res = await post(t.url + "/v1/messages", k.key, { ...body, stream: true }, ANTHROPIC_HEADERS);
    assert.equal(res.status, 200);
    const { frames } = await readFrames(res);
    const start = JSON.parse(frames.find((f) => f.event === "message_start")!.data);
    assert.equal(start.message.usage.input_tokens, estimate);
    const delta = JSON.parse(frames.find((f) => f.event === "message_delta")!.data);
    assert.ok(
      delta.usage.input_tokens > 0 && delta.usage.input_tokens !== estimate,
      "the real count at the end",
    );
  });
});

Deno.test("Claude Code: anthropic-beta reaches a native Messages upstream, and only there", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const beta = "claude-code-20250219,context-management-2025-06-27,effort-2025-11-24";
    const headers = {
      ...ANTHROPIC_HEADERS,
      "anthropic-beta": beta,
      "anthropic-dangerous-direct-browser-access": "true",
    };
    const body = { max_tokens: 20, messages: [{ role: "user", content: "hi" }] };
    for (
      const [model, upstreamPath, forwarded] of [
        ["beta-sonnet-5", "/v1/messages", beta],
        ["k3", "/v1/chat/completions", undefined],
      ] as const
    ) {
      t.sim.requests.length = 0;
      const res = await post(t.url + "/v1/messages?beta=true", k.key, { ...body, model }, headers);
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
      const sent = t.sim.requests.at(-1)!;
      assert.equal(sent.path, upstreamPath);
      const h = sent.headers as Record<string, string>;
      assert.equal(h["anthropic-beta"], forwarded, model);
      assert.equal(
        h["anthropic-dangerous-direct-browser-access"],
        undefined,
        "a browser flag is not forwarded",
      );
      assert.notEqual(h["x-api-key"] ?? h["authorization"], undefined);
      assert.ok(!JSON.stringify(h).includes(k.key), "the client's key never reaches the upstream");
    }
  });
});

Deno.test("Claude Code: a role:'system' turn is accepted, passed through natively, kept in place when translated", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const turn = {
      role: "system",
      content: [{ type: "text", text: "# Environment\ncwd: /tmp/x", cache_control: { type: "ephemeral" } }],
    };
    const messages = [{ role: "user", content: [{ type: "text", text: "Напиши файл" }] }, turn];
    for (
      const [model, check] of [
        ["beta-sonnet-5", (b: any) => assert.deepEqual(b.messages, messages)],
        ["k3", (b: any) => {
          const roles = b.messages.map((m: any) => m.role);
          assert.deepEqual(roles, ["system", "user", "system"], JSON.stringify(b.messages));
          assert.equal(b.messages[2].content, "# Environment\ncwd: /tmp/x");
        }],
        ["delta-eta-4.6-high", (b: any) => {
          const last = b.input.at(-1);
          assert.deepEqual(last, {
            type: "message",
            role: "developer",
            content: "# Environment\ncwd: /tmp/x",
          });
        }],
        ["theta3.8-max", (b: any) => assert.equal(b.messages.at(-1).role, "system")],
      ] as const
    ) {
      for (const stream of [false, true]) {
        t.sim.requests.length = 0;
        const res = await post(t.url + "/v1/messages", k.key, {
          model,
          max_tokens: 30,
          stream,
          system: [{ type: "text", text: "You are a coding agent." }],
          messages,
        }, ANTHROPIC_HEADERS);
        const text = await res.text();
        assert.equal(res.status, 200, `${model} stream=${stream}: ${text.slice(0, 300)}`);
        check(t.sim.requests.at(-1)!.body as any);
      }
    }
    // Instruction turns are text: anything else in one is refused with the block's path.
    const bad = await post(t.url + "/v1/messages", k.key, {
      model: "k3",
      max_tokens: 30,
      messages: [messages[0], {
        role: "system",
        content: [{ type: "image", source: { type: "url", url: "x" } }],
      }],
    }, ANTHROPIC_HEADERS);
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, "messages.1.content.0.type");
  });
});

Deno.test("Claude Code on gamma/eta: thinking is dropped (no reasoning.effort upstream); output_config is refused by name", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const body = {
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 2048 },
      messages: [{ role: "user", content: "hi" }],
    };
    for (const model of ["delta-eta-4.6-high", "gamma-2.5"]) {
      t.sim.requests.length = 0;
      const res = await post(t.url + "/v1/messages", k.key, { ...body, model }, ANTHROPIC_HEADERS);
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
      const sent = t.sim.requests.at(-1)!;
      assert.equal(sent.path, "/v1/responses");
      // The thinking budget is dropped: the effort comes from the id alone (eta's `-high`; gamma none).
      const effort = model.startsWith("delta-eta") ? { effort: "high" } : undefined;
      assert.deepEqual((sent.body as Record<string, unknown>).reasoning, effort, model);
      // spec §4.6: the effort is in the id; output_config is outside the closed list.
      const refused = await post(t.url + "/v1/messages", k.key, {
        ...body,
        model,
        output_config: { effort: "high" },
      }, ANTHROPIC_HEADERS);
      const json = await refused.json();
      assert.equal(refused.status, 400, model);
      assert.deepEqual([json.error.code, json.error.param], ["delta_parameter_unavailable", "output_config"]);
      assert.match(
        json.error.message,
        /output_config/,
        "the message names the field for clients that print only it",
      );
    }
    // Where the translation means something (theta on Chat), the same thinking budget still carries an effort.
    t.sim.requests.length = 0;
    const control = await post(
      t.url + "/v1/messages",
      k.key,
      { ...body, model: "theta3.8-max" },
      ANTHROPIC_HEADERS,
    );
    assert.equal(control.status, 200);
    await control.body?.cancel();
    assert.equal(typeof (t.sim.requests.at(-1)!.body as Record<string, unknown>).reasoning_effort, "string");
    assert.equal((await t.admin("GET", `/admin/keys/${k.id}`)).json.held_usd, "0.00");
  });
});

Deno.test("Codex: the hosted web_search tool becomes web_search_options on alpha, beta's server tool, is dropped on theta, refused on gamma/eta", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const body = (model: string, input = "hi") => ({
      model,
      input,
      max_output_tokens: 20,
      tools: [
        { type: "function", name: "shell", parameters: { type: "object", properties: {} } },
        {
          type: "web_search",
          external_web_access: true,
          user_location: { type: "approximate", country: "RU" },
        },
      ],
    });
    for (
      const [model, expected] of [["k3", { user_location: { type: "approximate", country: "RU" } }], [
        "theta3.8-max",
        undefined,
      ]] as const
    ) {
      t.sim.requests.length = 0;
      const res = await post(t.url + "/v1/responses", k.key, body(model));
      assert.equal(res.status, 200, `${model}: ${await res.clone().text()}`);
      await res.body?.cancel();
      const sent = t.sim.requests.at(-1)!.body as Record<string, any>;
      assert.deepEqual(sent.web_search_options, expected, model);
      assert.deepEqual(sent.tools.map((x: any) => x.function.name), ["shell"], model);
    }
    // beta: Messages' own web search server tool (protocols §5.3); the provider's searches are billed 0.01 each
    // (spec §8.1 p.6).
    for (const stream of [false, true]) {
      t.sim.requests.length = 0;
      const res = await post(t.url + "/v1/responses", k.key, {
        ...body("beta-sonnet-5", "[[sim:search=2]] найди"),
        stream,
      });
      assert.equal(res.status, 200, await res.clone().text());
      const text = await res.text();
      assert.match(text, /"status":"completed"/);
      const sent = t.sim.requests.at(-1)!.body as Record<string, any>;
      assert.deepEqual(sent.tools.at(-1), { type: "web_search_20250305", name: "web_search", max_uses: 5 });
      assert.deepEqual(sent.tools.slice(0, -1).map((x: any) => x.name), ["shell"]);
      const usage = await fetch(t.url + "/v1/usage/requests?family=beta", {
        headers: { authorization: `Bearer ${k.key}` },
      });
      const row = (await usage.json()).data[0];
      assert.equal(row.web_search_requests, 2, JSON.stringify(row));
    }
    for (const model of ["gamma-2.5", "delta-eta-4.6-high"]) {
      const res = await post(t.url + "/v1/responses", k.key, body(model));
      const json = await res.json();
      assert.equal(res.status, 400, model);
      assert.equal(json.error.code, "delta_parameter_unavailable");
      assert.equal(json.error.param, "tools.1");
    }
    assert.equal((await t.admin("GET", `/admin/keys/${k.id}`)).json.held_usd, "0.00");
  });
});

Deno.test("Codex: namespace tools travel flat on translated routes, and a member's call comes back with its namespace", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const fn = (name: string) => ({
      type: "function",
      name,
      strict: false,
      parameters: { type: "object", properties: {} },
    });
    const tools = [
      {
        type: "namespace",
        name: "multi_agent_v1",
        description: "Sub-agents",
        tools: [fn("spawn_agent"), fn("wait_agent")],
      },
      fn("exec_command"),
    ];
    const flat = ["multi_agent_v1__spawn_agent", "multi_agent_v1__wait_agent", "exec_command"];
    const upstreamNames = (b: any) => b.tools.map((x: any) => x.function?.name ?? x.name);
    const upstreamCallName = (b: any) =>
      b.messages.flatMap((m: any) =>
        m.tool_calls?.map((c: any) => c.function.name) ??
          (Array.isArray(m.content)
            ? m.content.filter((c: any) => c.type === "tool_use").map((c: any) => c.name)
            : [])
      );
    for (const model of ["k3", "beta-sonnet-5", "theta3.8-max"]) {
      for (const stream of [false, true]) {
        const label = `${model} stream=${stream}`;
        t.sim.requests.length = 0;
        const res = await post(t.url + "/v1/responses", k.key, {
          model,
          stream,
          tools,
          input: [{
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "[[sim:tool]] запусти" }],
          }],
        });
        assert.equal(res.status, 200, label);
        assert.deepEqual(upstreamNames(t.sim.requests.at(-1)!.body), flat, label);
        let call: any;
        if (stream) {
          const { frames } = await readFrames(res);
          const events = frames.map((f) => JSON.parse(f.data));
          const added = events.find((e) =>
            e.type === "response.output_item.added" && e.item.type === "function_call"
          );
          const done = events.find((e) =>
            e.type === "response.output_item.done" && e.item.type === "function_call"
          );
          const completed = events.find((e) => e.type === "response.completed");
          assert.deepEqual([added.item.name, added.item.namespace], ["spawn_agent", "multi_agent_v1"], label);
          assert.deepEqual(
            completed.response.output.find((o: any) => o.type === "function_call"),
            done.item,
            label,
          );
          call = done.item;
        } else {
          call = (await res.json()).output.find((o: any) => o.type === "function_call");
        }
        assert.deepEqual([call.name, call.namespace], ["spawn_agent", "multi_agent_v1"], label);

        // Turn 2 echoes the call (with its namespace and item id) and answers it.
        t.sim.requests.length = 0;
        const next = await post(t.url + "/v1/responses", k.key, {
          model,
          stream,
          tools,
          input: [
            { type: "message", role: "user", content: [{ type: "input_text", text: "запусти" }] },
            { ...call, id: call.id },
            { type: "function_call_output", id: "fco_1", call_id: call.call_id, output: "агент запущен" },
          ],
        });
        assert.equal(next.status, 200, `${label}: ${await next.clone().text()}`);
        await next.body?.cancel();
        assert.deepEqual(
          upstreamCallName(t.sim.requests.at(-1)!.body),
          ["multi_agent_v1__spawn_agent"],
          label,
        );
      }
    }
    // A native Responses upstream (gamma/eta) gets the namespace tool unchanged.
    t.sim.requests.length = 0;
    const native = await post(t.url + "/v1/responses", k.key, {
      model: "delta-eta-4.6-high",
      tools,
      input: "hi",
    });
    assert.equal(native.status, 200, await native.clone().text());
    await native.body?.cancel();
    assert.deepEqual((t.sim.requests.at(-1)!.body as any).tools, tools);
  });
});

Deno.test("GET /v1/models lists through both SDKs; ?beta=true is accepted on count_tokens too", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const openai = new OpenAI({ apiKey: k.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: k.key, baseURL: t.url, maxRetries: 0 });
    const viaOpenai: string[] = [];
    for await (const m of openai.models.list()) viaOpenai.push(m.id);
    const viaAnthropic: string[] = [];
    for await (const m of anthropic.models.list()) viaAnthropic.push(m.id);
    assert.deepEqual(viaAnthropic, viaOpenai);
    assert.ok(
      viaOpenai.includes("beta-sonnet-5") && viaOpenai.includes("theta3.8-max") && viaOpenai.length === 26,
    );
    const quote = await post(t.url + "/v1/messages/count_tokens?beta=true", k.key, {
      model: "beta-sonnet-5",
      messages: [{ role: "user", content: "привет" }],
    }, ANTHROPIC_HEADERS);
    assert.equal(quote.status, 200);
    assert.equal(typeof (await quote.json()).input_tokens, "number");
  });
});
