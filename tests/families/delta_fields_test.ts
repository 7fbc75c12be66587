/**
 * Families gamma and eta: the closed accepted list of spec §4.6, field by field on all three surfaces, through a
 * running gateway. An accepted field reaches the upstream (or its translation does); an ignored field is taken
 * out; any other field is refused with 400 `delta_parameter_unavailable` naming it, before anything is held
 * or sent (spec §7.5: a local refusal is not billed).
 */
import assert from "node:assert/strict";
import { findModel } from "../../src/catalog/models.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";

type Surface = "messages" | "chat" | "responses";
type Body = Record<string, unknown>;

const PATH: Record<Surface, string> = {
  messages: "/v1/messages",
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
};

const BASE: Record<Surface, Body> = {
  messages: { max_tokens: 50, messages: [{ role: "user", content: "hi" }] },
  chat: { messages: [{ role: "user", content: "hi" }] },
  responses: { input: "hi" },
};

const schema = { type: "object", properties: {} };
const TOOL: Record<Surface, Body> = {
  messages: { name: "f", input_schema: schema },
  chat: { type: "function", function: { name: "f", parameters: schema } },
  responses: { type: "function", name: "f", parameters: schema },
};

/** Accepted fields: the value, and what the upstream (Responses protocol) must then hold. */
const ACCEPTED: [Surface, string, unknown, (up: Body) => void][] = [
  ["messages", "max_tokens", 77, (up) => assert.equal(up.max_output_tokens, 77)],
  ["messages", "system", "Будь краток.", (up) => assert.equal(up.instructions, "Будь краток.")],
  ["messages", "stream", true, (up) => assert.equal(up.stream, true)],
  [
    "messages",
    "tools",
    [TOOL.messages, { type: "custom", name: "g", input_schema: schema }],
    (up) => assert.deepEqual((up.tools as Body[]).map((t) => t.name), ["f", "g"]),
  ],
  ["messages", "tool_choice", { type: "auto" }, (up) => assert.equal(up.tool_choice, "auto")],
  ["chat", "max_tokens", 77, (up) => assert.equal(up.max_output_tokens, 77)],
  ["chat", "max_completion_tokens", 78, (up) => assert.equal(up.max_output_tokens, 78)],
  ["chat", "stream", true, (up) => assert.equal(up.stream, true)],
  ["chat", "tools", [TOOL.chat], (up) => assert.deepEqual((up.tools as Body[]).map((t) => t.name), ["f"])],
  ["chat", "tool_choice", "auto", (up) => assert.equal(up.tool_choice, "auto")],
  ["responses", "instructions", "Будь краток.", (up) => assert.equal(up.instructions, "Будь краток.")],
  ["responses", "max_output_tokens", 79, (up) => assert.equal(up.max_output_tokens, 79)],
  ["responses", "stream", true, (up) => assert.equal(up.stream, true)],
  [
    "responses",
    "tools",
    [TOOL.responses, { type: "namespace", name: "n", tools: [TOOL.responses] }],
    (up) => assert.deepEqual((up.tools as Body[]).map((t) => t.type), ["function", "namespace"]),
  ],
  ["responses", "tool_choice", "auto", (up) => assert.equal(up.tool_choice, "auto")],
  [
    "responses",
    "text",
    { format: { type: "text" } },
    (up) => assert.deepEqual(up.text, { format: { type: "text" } }),
  ],
];

/** Accepted on every surface without effect, and not sent upstream (spec §4.6). */
const IGNORED: [string, unknown][] = [
  ["temperature", 0.3],
  ["top_p", 0.9],
  ["metadata", { user_id: "u-1" }],
  ["thinking", { type: "enabled", budget_tokens: 2048 }],
];

/** Refused: [surface, field, value, expected param]. */
const REFUSED: [Surface, string, unknown, string][] = [
  // Named by spec §4.6 on the surfaces that have them.
  ["chat", "response_format", { type: "json_object" }, "response_format"],
  ["chat", "reasoning_effort", "high", "reasoning_effort"],
  ["chat", "stop", ["\n"], "stop"],
  ["messages", "stop_sequences", ["\n"], "stop_sequences"],
  ["responses", "reasoning", { effort: "high" }, "reasoning"],
  ["responses", "text", { format: { type: "json_object" } }, "text.format"],
  ["responses", "text", { verbosity: "low" }, "text.verbosity"],
  // Outside the list: what SDKs and coding agents add.
  ["chat", "stream_options", { include_usage: true }, "stream_options"],
  ["chat", "parallel_tool_calls", true, "parallel_tool_calls"],
  ["chat", "n", 1, "n"],
  ["chat", "user", "u", "user"],
  ["chat", "system", "x", "system"],
  ["messages", "top_k", 5, "top_k"],
  ["messages", "context_management", { edits: [] }, "context_management"],
  ["messages", "output_config", { effort: "high" }, "output_config"],
  ["messages", "service_tier", "auto", "service_tier"],
  ["messages", "instructions", "x", "instructions"],
  ["responses", "parallel_tool_calls", true, "parallel_tool_calls"],
  ["responses", "store", false, "store"],
  ["responses", "include", ["reasoning.encrypted_content"], "include"],
  ["responses", "prompt_cache_key", "s-1", "prompt_cache_key"],
  ["responses", "client_metadata", {}, "client_metadata"],
  ["responses", "max_tokens", 10, "max_tokens"],
  ["responses", "previous_response_id", "resp_1", "previous_response_id"],
  // tool_choice: only the surface's automatic form.
  ["messages", "tool_choice", { type: "any" }, "tool_choice"],
  ["messages", "tool_choice", { type: "auto", disable_parallel_tool_use: true }, "tool_choice"],
  ["chat", "tool_choice", "required", "tool_choice"],
  ["chat", "tool_choice", "none", "tool_choice"],
  ["chat", "tool_choice", { type: "function", function: { name: "f" } }, "tool_choice"],
  ["responses", "tool_choice", { type: "auto" }, "tool_choice"],
  ["responses", "tool_choice", "required", "tool_choice"],
  // Typed server tools (spec §4.5) and hosted tools: refused at the tool.
  [
    "messages",
    "tools",
    [TOOL.messages, { type: "web_search_20250305", name: "web_search", max_uses: 1 }],
    "tools.1",
  ],
  ["messages", "tools", [{ type: "web_fetch_20250910", name: "web_fetch", max_uses: 1 }], "tools.0"],
  ["chat", "tools", [{ type: "custom", custom: { name: "g" } }], "tools.0"],
  ["responses", "tools", [{ type: "file_search", vector_store_ids: [] }], "tools.0"],
  ["responses", "tools", [TOOL.responses, { type: "web_search" }], "tools.1"],
];

function request(t: TestGateway, key: string, surface: Surface, body: Body): Promise<Response> {
  return post(t.url + PATH[surface], key, body, surface === "messages" ? ANTHROPIC_HEADERS : {});
}

for (const model of ["gamma-2.5", "delta-eta-4.6-high"]) {
  Deno.test(`${model}: every accepted field is served and reaches the upstream (spec §4.6)`, async () => {
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      for (const [surface, field, value, check] of ACCEPTED) {
        t.sim.requests.length = 0;
        const res = await request(t, k.key, surface, { model, ...BASE[surface], [field]: value });
        assert.equal(res.status, 200, `${surface} ${field}: ${await res.clone().text()}`);
        await res.text();
        const up = t.sim.requests.at(-1)!;
        assert.equal(up.path, "/v1/responses");
        check(up.body as Body);
      }
    });
  });

  Deno.test(`${model}: temperature, top_p, metadata and thinking are accepted on every surface and not sent`, async () => {
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      for (const surface of ["messages", "chat", "responses"] as const) {
        t.sim.requests.length = 0;
        const res = await request(t, k.key, surface, {
          model,
          ...BASE[surface],
          ...Object.fromEntries(IGNORED),
        });
        assert.equal(res.status, 200, `${surface}: ${await res.clone().text()}`);
        await res.text();
        const up = t.sim.requests.at(-1)!.body as Body;
        for (const [field] of IGNORED) assert.equal(up[field], undefined, `${surface} ${field}`);
        // No effort from the client reaches the upstream: only the id's own (eta), none for gamma.
        assert.deepEqual(
          up.reasoning,
          findModel(model)!.effort ? { effort: findModel(model)!.effort } : undefined,
          surface,
        );
      }
    });
  });

  Deno.test(`${model}: every other field is refused with delta_parameter_unavailable naming it, nothing held or sent`, async () => {
    await withGateway(async (t) => {
      const k = await t.newKey("1.00");
      t.sim.requests.length = 0;
      for (const [surface, field, value, param] of REFUSED) {
        const res = await request(t, k.key, surface, { model, ...BASE[surface], [field]: value });
        const json = await res.json();
        const where = `${surface} ${field}=${JSON.stringify(value)}`;
        assert.equal(res.status, 400, where);
        assert.deepEqual([json.error.code, json.error.param], ["delta_parameter_unavailable", param], where);
        assert.equal(res.headers.get("x-gateway-hold-usd"), null, where);
      }
      assert.equal(t.sim.requests.length, 0, "no refused request reached the upstream");
      const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
      assert.deepEqual([json.balance_usd, json.held_usd], ["1.00", "0.00"]);
    });
  });
}
