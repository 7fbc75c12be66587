/**
 * Families gamma and eta: tools, tool results, hosted tool items and images (spec §4.6, §7.5, §8.4) through a
 * running gateway. Every refusal is a 400 with its code, before anything is held or sent.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, withGateway } from "../support/harness.ts";

type Body = Record<string, unknown>;
const schema = { type: "object", properties: {} };
const chatTool = (name: string, parameters: unknown = schema) => ({
  type: "function",
  function: { name, parameters },
});
const png = (data = "iVBORw0KGgo=") => ({
  type: "image_url",
  image_url: { url: `data:image/png;base64,${data}` },
});
const chatImages = (parts: unknown[]) => ({
  messages: [{ role: "user", content: [{ type: "text", text: "что это?" }, ...parts] }],
});
const toolTurn = (content: string) => ({
  messages: [
    { role: "user", content: "погода?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "call_1", content },
  ],
  tools: [chatTool("f")],
});

/** [label, model, path, body, expected code, expected param]. */
const REFUSED: [string, string, string, Body, string, string | null][] = [
  [
    "65 tools",
    "gamma-2.5",
    "chat",
    { ...chatImages([]), tools: Array.from({ length: 65 }, (_, i) => chatTool(`t${i}`)) },
    "delta_client_tools_invalid",
    "tools",
  ],
  [
    "a name with a dot",
    "delta-eta-4.6-high",
    "responses",
    { input: "hi", tools: [{ type: "function", name: "a.b", parameters: schema }] },
    "delta_client_tools_invalid",
    "tools.0",
  ],
  [
    "a 65-character name",
    "gamma-2.5",
    "responses",
    { input: "hi", tools: [{ type: "function", name: "x".repeat(65), parameters: schema }] },
    "delta_client_tools_invalid",
    "tools.0",
  ],
  [
    "a duplicate name",
    "gamma-2.5",
    "chat",
    { ...chatImages([]), tools: [chatTool("f"), chatTool("f")] },
    "delta_client_tools_invalid",
    "tools.1",
  ],
  [
    "Messages: a name the Messages decoder refuses by its own rule (a space)",
    "gamma-2.5",
    "messages",
    { tools: [{ name: "get weather", input_schema: schema }] },
    "delta_client_tools_invalid",
    "tools.0",
  ],
  [
    "Messages: a 100-character name (Messages allows 128)",
    "delta-eta-4.6-low",
    "messages",
    { tools: [{ name: "x".repeat(100), input_schema: schema }] },
    "delta_client_tools_invalid",
    "tools.0",
  ],
  [
    "Messages: a duplicate name",
    "delta-eta-4.6-low",
    "messages",
    { tools: [{ name: "f", input_schema: schema }, { name: "f", input_schema: schema }] },
    "delta_client_tools_invalid",
    "tools.1",
  ],
  [
    "Responses: a duplicate name",
    "gamma-2.5-fast",
    "responses",
    {
      input: "hi",
      tools: [{ type: "function", name: "f", parameters: schema }, {
        type: "function",
        name: "f",
        parameters: schema,
      }],
    },
    "delta_client_tools_invalid",
    "tools.1",
  ],
  [
    "Messages: an image inside a tool result",
    "delta-eta-4.6-high",
    "messages",
    {
      messages: [
        { role: "user", content: "скриншот?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{ type: "text", text: "вот" }, {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
            }],
          }],
        },
      ],
      tools: [{ name: "f", input_schema: schema }],
    },
    "delta_client_tool_result_unsupported",
    "messages.2.content.0.content.1",
  ],
  [
    "Chat: an image part in a tool message",
    "delta-eta-4.6-high",
    "chat",
    {
      ...toolTurn("x"),
      messages: [
        ...toolTurn("x").messages.slice(0, 2),
        {
          role: "tool",
          tool_call_id: "call_1",
          content: [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }],
        },
      ],
    },
    "delta_client_tool_result_unsupported",
    "messages.2.content.0",
  ],
  [
    "Responses: an input_image in a function_call_output",
    "gamma-2.5",
    "responses",
    {
      input: [
        { type: "message", role: "user", content: "hi" },
        { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
        {
          type: "function_call_output",
          call_id: "call_1",
          output: [{ type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" }],
        },
      ],
      tools: [{ type: "function", name: "f", parameters: schema }],
    },
    "delta_client_tool_result_unsupported",
    "input.2.output.0",
  ],
  [
    "Chat: a tool result without its call",
    "gamma-2.5",
    "chat",
    { messages: [{ role: "user", content: "hi" }, { role: "tool", tool_call_id: "call_x", content: "ok" }] },
    "delta_client_tool_result_invalid",
    null,
  ],
  [
    "Responses: a function_call_output without its call",
    "delta-eta-4.6-low",
    "responses",
    { input: [{ type: "function_call_output", call_id: "call_x", output: "ok" }] },
    "delta_client_tool_result_invalid",
    null,
  ],
  [
    "Messages: a tool result over 8 MiB",
    "gamma-2.5",
    "messages",
    {
      messages: [
        { role: "user", content: "погода?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "x".repeat(8 * 1024 * 1024 + 1),
          }],
        },
      ],
      tools: [{ name: "f", input_schema: schema }],
    },
    "delta_client_tool_result_too_large",
    null,
  ],
  [
    "Responses: a function_call_output over 8 MiB",
    "delta-eta-4.6-low",
    "responses",
    {
      input: [
        { type: "message", role: "user", content: "hi" },
        { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "x".repeat(8 * 1024 * 1024 + 1) },
      ],
      tools: [{ type: "function", name: "f", parameters: schema }],
    },
    "delta_client_tool_result_too_large",
    null,
  ],
  [
    "Messages: an image on gamma",
    "gamma-2.5-fast",
    "messages",
    {
      messages: [{
        role: "user",
        content: [{
          type: "image",
          source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
        }],
      }],
    },
    "delta_image_input_unavailable",
    null,
  ],
  [
    "Responses: an image on gamma",
    "gamma-2.5",
    "responses",
    {
      input: [{
        role: "user",
        content: [{ type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" }],
      }],
    },
    "delta_image_input_unavailable",
    null,
  ],
  [
    "Messages: an image URL on eta",
    "delta-eta-4.6-xhigh",
    "messages",
    {
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }],
      }],
    },
    "delta_image_input_invalid",
    null,
  ],
  [
    "Responses: an image URL on eta",
    "delta-eta-4.6-xhigh-fast",
    "responses",
    { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png" }] }] },
    "delta_image_input_invalid",
    null,
  ],
  [
    "a schema over 256 KiB",
    "delta-eta-4.6-high",
    "chat",
    {
      ...chatImages([]),
      tools: [chatTool("f", { type: "object", description: "й".repeat(131_073) })],
    },
    "delta_client_tools_invalid",
    "tools",
  ],
  [
    "a tool result over 8 MiB",
    "gamma-2.5",
    "chat",
    toolTurn("x".repeat(8 * 1024 * 1024 + 1)),
    "delta_client_tool_result_too_large",
    null,
  ],
  [
    "a tool result without its call",
    "delta-eta-4.6-high",
    "messages",
    {
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "ok" }] }],
    },
    "delta_client_tool_result_invalid",
    null,
  ],
  [
    "a hosted tool item in input",
    "gamma-2.5",
    "responses",
    {
      input: [{ type: "message", role: "user", content: "hi" }, {
        type: "web_search_call",
        id: "ws_1",
        status: "completed",
      }],
    },
    "delta_client_tools_unavailable",
    "input.1",
  ],
  ["an image on gamma", "gamma-2.5", "chat", chatImages([png()]), "delta_image_input_unavailable", null],
  [
    "an image URL on eta",
    "delta-eta-4.6-high",
    "chat",
    chatImages([{ type: "image_url", image_url: { url: "https://example.com/a.png" } }]),
    "delta_image_input_invalid",
    null,
  ],
  [
    "a bmp on eta",
    "delta-eta-4.6-high",
    "chat",
    chatImages([{ type: "image_url", image_url: { url: "data:image/bmp;base64,Qk0=" } }]),
    "delta_image_input_invalid",
    null,
  ],
  [
    "17 images on eta",
    "delta-eta-4.6-high",
    "chat",
    chatImages(Array.from({ length: 17 }, () => png())),
    "delta_image_input_invalid",
    null,
  ],
];

const PATH: Record<string, string> = {
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
  responses: "/v1/responses",
};

Deno.test("gamma/eta: tool, tool-result, hosted-item and image rules refuse with their code, nothing held or sent", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const [label, model, surface, body, code, param] of REFUSED) {
      const base = surface === "messages"
        ? { max_tokens: 50, messages: [{ role: "user", content: "hi" }] }
        : surface === "chat"
        ? { messages: [{ role: "user", content: "hi" }] }
        : {};
      const res = await post(
        t.url + PATH[surface]!,
        k.key,
        { model, ...base, ...body },
        surface === "messages" ? ANTHROPIC_HEADERS : {},
      );
      const json = await res.json();
      const err = json.error;
      assert.equal(res.status, 400, `${label}: ${JSON.stringify(json).slice(0, 300)}`);
      assert.deepEqual([err.code, err.param], [code, param], label);
    }
    assert.equal(t.sim.requests.length, 0, "no refused request reached the upstream");
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.deepEqual([json.balance_usd, json.held_usd], ["1.00", "0.00"]);
  });
});

Deno.test("gamma/eta: the limits themselves are served — 64 tools, 16 inline images on eta, a tool result with its call", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const ok: [string, string, Body][] = [
      ["64 tools", "gamma-2.5", {
        ...chatImages([]),
        tools: Array.from({ length: 64 }, (_, i) => chatTool(`t${i}`)),
      }],
      ["16 images", "delta-eta-4.6-high", chatImages(Array.from({ length: 16 }, () => png()))],
      [
        "webp and jpeg",
        "delta-eta-4.6-high",
        chatImages([{ type: "image_url", image_url: { url: "data:image/webp;base64,UklGRg==" } }, {
          type: "image_url",
          image_url: { url: "data:image/jpeg;base64,/9j/4A==" },
        }]),
      ],
      ["a tool result with its call", "gamma-2.5", toolTurn("солнечно")],
    ];
    for (const [label, model, body] of ok) {
      const res = await post(t.url + "/v1/chat/completions", k.key, { model, ...body });
      assert.equal(res.status, 200, `${label}: ${(await res.clone().text()).slice(0, 300)}`);
      await res.text();
    }
  });
});
