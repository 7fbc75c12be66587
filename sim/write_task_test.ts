import assert from "node:assert/strict";
import {
  anthropicBody,
  chatBody,
  payloads,
  post,
  readSse,
  responsesBody,
  TOOL_DEFS,
  withSim,
} from "./test_util.ts";
import {
  encodeWriteTask,
  parseWriteTask,
  shellQuote,
  writeCommand,
  writeDirective,
  type WriteTask,
} from "./write_task.ts";
import { scanDirectives } from "./directives.ts";

const TASK: WriteTask = {
  path: "/tmp/e2e/hello.txt",
  content: 'Привет, it\'s "quoted" $HOME `x` \\n 😀\nline 2\n',
};
const PROMPT = `Создай файл. ${writeDirective(TASK)}`;
const WRITE_ARGS = JSON.stringify({ file_path: TASK.path, content: TASK.content });
const CMD = `printf '%s' 'Привет, it'\\''s "quoted" $HOME \`x\` \\n 😀\nline 2\n' > '/tmp/e2e/hello.txt'`;
const EXEC_ARGS = JSON.stringify({ cmd: CMD });

const schema = { type: "object", properties: {} };
/** Claude Code's tools (Messages) and Codex's (Responses), reduced to what the simulator looks at. */
const CLAUDE_TOOLS = ["Agent", "Bash", "Edit", "Read", "Write"].map((name) => ({
  name,
  input_schema: schema,
}));
const CLAUDE_TOOLS_CHAT = CLAUDE_TOOLS.map((t) => ({
  type: "function",
  function: { name: t.name, parameters: schema },
}));
const CODEX_TOOLS = [
  ...["exec_command", "write_stdin"].map((name) => ({
    type: "function",
    name,
    strict: false,
    parameters: schema,
  })),
  { type: "namespace", name: "multi_agent_v1", tools: [] },
  { type: "web_search", external_web_access: true },
];
const CODEX_TOOLS_CHAT = ["exec_command", "write_stdin"].map((name) => ({
  type: "function",
  function: { name, parameters: schema },
}));

Deno.test("write: directive value round-trips; bad values are ignored", () => {
  assert.deepEqual(parseWriteTask(encodeWriteTask(TASK)), TASK);
  assert.deepEqual(scanDirectives(PROMPT).directives.write, TASK);
  assert.equal(scanDirectives(PROMPT).clean, "Создай файл. ");
  for (
    const bad of [
      "",
      "!!!",
      encodeWriteTask({ path: "", content: "x" }),
      btoa(JSON.stringify({ path: "/a" })),
      btoa("[1]"),
      btoa("not json"),
    ]
  ) {
    assert.equal(scanDirectives(`[[sim:write=${bad}]]`).directives.write, undefined, bad);
  }
});

Deno.test("write: the shell command is quoted so that nothing is expanded", async () => {
  assert.equal(shellQuote("a'b"), `'a'\\''b'`);
  assert.equal(writeCommand(TASK), CMD);
  const dir = await Deno.makeTempDir();
  try {
    const task = { path: `${dir}/it's a file.txt`, content: TASK.content };
    const out = await new Deno.Command("sh", {
      args: ["-c", writeCommand(task)],
      env: { HOME: "/nonexistent" },
    })
      .output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.equal(await Deno.readTextFile(task.path), TASK.content);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("write: Anthropic Messages → Write tool_use, JSON and stream", () =>
  withSim(async (sim) => {
    const body = anthropicBody(PROMPT, { max_tokens: 32000, tools: CLAUDE_TOOLS });
    const json = await (await post(sim, "/v1/messages", body)).json();
    assert.equal(json.stop_reason, "tool_use");
    assert.equal(json.content.length, 1);
    assert.equal(json.content[0].type, "tool_use");
    assert.equal(json.content[0].name, "Write");
    assert.deepEqual(json.content[0].input, { file_path: TASK.path, content: TASK.content });
    assert.equal(json.usage.output_tokens, 3);

    const p = payloads(await readSse(await post(sim, "/v1/messages", { ...body, stream: true })));
    const start = p.find((e) => e.type === "content_block_start");
    assert.equal(start.content_block.type, "tool_use");
    assert.equal(start.content_block.name, "Write");
    const args = p.filter((e) => e.delta?.type === "input_json_delta").map((e) => e.delta.partial_json);
    assert.equal(args.length, 3);
    assert.equal(args.join(""), WRITE_ARGS);
    assert.equal(p.find((e) => e.type === "message_delta").delta.stop_reason, "tool_use");
  }));

Deno.test("write: Chat Completions → Write / exec_command tool call, JSON and stream", () =>
  withSim(async (sim) => {
    for (
      const [tools, name, args] of [[CLAUDE_TOOLS_CHAT, "Write", WRITE_ARGS], [
        CODEX_TOOLS_CHAT,
        "exec_command",
        EXEC_ARGS,
      ]] as const
    ) {
      const body = chatBody(PROMPT, { tools, tool_choice: "auto" });
      const json = await (await post(sim, "/v1/chat/completions", body)).json();
      assert.equal(json.choices[0].finish_reason, "tool_calls");
      assert.equal(json.choices[0].message.content, null);
      const call = json.choices[0].message.tool_calls[0];
      assert.equal(call.function.name, name);
      assert.equal(call.function.arguments, args);

      const chunks = payloads(
        await readSse(
          await post(sim, "/v1/chat/completions", {
            ...body,
            stream: true,
            stream_options: { include_usage: true },
          }),
        ),
      );
      const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      assert.equal(calls[0].function.name, name);
      assert.equal(calls.map((c: any) => c.function.arguments).join(""), args);
      assert.equal(chunks.at(-2).choices[0].finish_reason, "tool_calls");
      assert.equal(chunks.at(-1).usage.completion_tokens, 3);
    }
  }));

Deno.test("write: Responses → exec_command / Write function_call, JSON and stream", () =>
  withSim(async (sim) => {
    const claudeOnResponses = CLAUDE_TOOLS.map((t) => ({
      type: "function",
      name: t.name,
      parameters: schema,
    }));
    for (
      const [tools, name, args] of [[CODEX_TOOLS, "exec_command", EXEC_ARGS], [
        claudeOnResponses,
        "Write",
        WRITE_ARGS,
      ]] as const
    ) {
      const body = responsesBody("", {
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "base prompt" }] },
          {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "<environment_context/>" }],
          },
          { type: "message", role: "user", content: [{ type: "input_text", text: PROMPT }] },
        ],
        tools,
        tool_choice: "auto",
      });
      const json = await (await post(sim, "/v1/responses", body)).json();
      assert.equal(json.status, "completed");
      assert.equal(json.output.length, 1);
      assert.equal(json.output[0].type, "function_call");
      assert.equal(json.output[0].name, name);
      assert.equal(json.output[0].arguments, args);

      const p = payloads(await readSse(await post(sim, "/v1/responses", { ...body, stream: true })));
      const deltas = p.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta);
      assert.equal(deltas.join(""), args);
      const done = p.find((e) => e.type === "response.output_item.done");
      assert.equal(done.item.name, name);
      assert.equal(done.item.arguments, args);
      assert.equal(p.at(-1).type, "response.completed");
    }
  }));

Deno.test("write: turn 2 (tool result last) answers with text; no writing tool or tool_choice none → text", () =>
  withSim(async (sim) => {
    const turn2 = await (await post(sim, "/v1/messages", {
      model: "m",
      max_tokens: 100,
      tools: CLAUDE_TOOLS,
      messages: [
        { role: "user", content: PROMPT },
        { role: "system", content: "# Environment" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Write", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "File created" }] },
      ],
    })).json();
    assert.equal(turn2.stop_reason, "end_turn");
    assert.ok(turn2.content[0].text.startsWith("Результат инструмента получен: «File created»."));

    const codex2 = await (await post(sim, "/v1/responses", {
      model: "m",
      tools: CODEX_TOOLS,
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: PROMPT }] },
        { type: "function_call", name: "exec_command", arguments: EXEC_ARGS, call_id: "c1" },
        { type: "function_call_output", call_id: "c1", output: "Process exited with code 0" },
      ],
    })).json();
    assert.equal(codex2.output[0].type, "message");
    assert.ok(codex2.output[0].content[0].text.startsWith("Результат инструмента получен: «Process exited"));

    // The directive beside a tool result (one merged user turn) does not call the tool again.
    const merged = await (await post(sim, "/v1/messages", {
      model: "m",
      max_tokens: 100,
      tools: CLAUDE_TOOLS,
      messages: [
        { role: "user", content: "start" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Write", input: {} }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }, {
            type: "text",
            text: PROMPT,
          }],
        },
      ],
    })).json();
    assert.equal(merged.stop_reason, "end_turn");

    const noWriter =
      await (await post(sim, "/v1/messages", anthropicBody(PROMPT, { tools: TOOL_DEFS.anthropic })))
        .json();
    assert.equal(noWriter.content[0].type, "text");
    const none = await (await post(
      sim,
      "/v1/chat/completions",
      chatBody(PROMPT, { tools: CODEX_TOOLS_CHAT, tool_choice: "none" }),
    )).json();
    assert.equal(none.choices[0].finish_reason, "stop");
  }));
