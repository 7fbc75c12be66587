import assert from "node:assert/strict";
import {
  Chunk,
  ChunkChoice,
  Completion,
  CompletionChoice,
  readChunk,
  readCompletion,
  readCompletionChoice,
  readUsage,
  Usage,
} from "./wire.ts";

function schemaAccepts(raw: Record<string, unknown>): boolean {
  const c = Chunk.safeParse(raw);
  if (!c.success) return false;
  const followed = c.data.choices?.find((x) => (x.index ?? 0) === 0);
  return followed === undefined || ChunkChoice.safeParse(followed).success;
}

Deno.test("readChunk accepts exactly what Chunk and ChunkChoice accept, and reads the same fields", () => {
  const call = { index: 0, id: "call_1", function: { name: "f", arguments: "{}" } };
  const chunks: Record<string, unknown>[] = [
    { choices: [{ index: 0, delta: { content: "a" }, finish_reason: null }] },
    { choices: [{ delta: { reasoning_content: "r", refusal: null } }], usage: null },
    { choices: [{ index: 0, delta: { tool_calls: [call, { index: 1, function: null }] } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 1 } },
    { choices: [], usage: { prompt_tokens: 1 } },
    { choices: [{ index: 1, delta: { content: 5 } }] },
    {},
    { choices: {} },
    { choices: [1] },
    { choices: [{ index: "0" }] },
    { choices: [{ index: 0, delta: "x" }] },
    { choices: [{ index: 0, delta: { content: 5 } }] },
    { choices: [{ index: 0, finish_reason: 1 }] },
    { choices: [{ index: 0, delta: { tool_calls: {} } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: "1" }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ function: [] }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ function: { arguments: {} } }] } }] },
    { choices: [], usage: 5 },
  ];
  for (const raw of chunks) {
    let read: ReturnType<typeof readChunk> | undefined;
    try {
      read = readChunk(raw);
    } catch {
      read = undefined;
    }
    assert.equal(read !== undefined, schemaAccepts(raw), JSON.stringify(raw));
    const parsed = Chunk.safeParse(raw);
    const followed = parsed.success ? parsed.data.choices?.find((x) => (x.index ?? 0) === 0) : undefined;
    const choice = followed && ChunkChoice.safeParse(followed);
    if (read?.choice && choice?.success) {
      const d = choice.data.delta;
      assert.equal(read.choice.finish_reason ?? null, choice.data.finish_reason ?? null);
      assert.equal(read.choice.delta?.content ?? null, d?.content ?? null);
      assert.equal(read.choice.delta?.tool_calls?.length ?? 0, d?.tool_calls?.length ?? 0);
    }
  }
});

Deno.test("readCompletion and readCompletionChoice accept exactly what Completion and CompletionChoice accept", () => {
  const completions: unknown[] = [
    { id: "c", model: "k3", choices: [], usage: { prompt_tokens: 1 } },
    { id: null, model: null, choices: [1], usage: null },
    { choices: [] },
    { id: 5, choices: [] },
    { model: {}, choices: [] },
    { choices: {} },
    { id: "c" },
    { choices: [], usage: 5 },
    { choices: [], usage: [] },
    [],
    null,
    "x",
  ];
  for (const raw of completions) {
    const read = readCompletion(raw);
    const schema = Completion.safeParse(raw);
    assert.equal(read !== undefined, schema.success, JSON.stringify(raw));
    if (read && schema.success) {
      assert.equal(read.id, schema.data.id);
      assert.equal(read.model, schema.data.model);
      assert.deepEqual(read.choices, schema.data.choices);
      assert.deepEqual(read.usage, schema.data.usage);
    }
  }
  const choices: unknown[] = [
    { index: 0, message: { role: "assistant", content: "hi", refusal: null }, finish_reason: "stop" },
    { message: { content: [{ type: "text", text: "a" }], reasoning_content: "r", reasoning: null } },
    { message: { content: null, tool_calls: [{ id: "1" }], annotations: [{ type: "url_citation" }] } },
    { message: { annotations: "not a list" }, finish_reason: null },
    { message: {}, index: "any" },
    { message: { content: 5 } },
    { message: { content: {} } },
    { message: { reasoning_content: 1 } },
    { message: { reasoning: [] } },
    { message: { refusal: {} } },
    { message: { tool_calls: {} } },
    { message: "text" },
    { message: [] },
    { finish_reason: "stop" },
    { message: {}, finish_reason: 1 },
    [],
    undefined,
  ];
  for (const raw of choices) {
    const read = readCompletionChoice(raw);
    const schema = CompletionChoice.safeParse(raw);
    assert.equal(read !== undefined, schema.success, JSON.stringify(raw));
    if (read && schema.success) {
      const m = schema.data.message;
      assert.equal(read.finish_reason, schema.data.finish_reason);
      for (
        const k of [
          "content",
          "reasoning_content",
          "reasoning",
          "refusal",
          "tool_calls",
          "annotations",
        ] as const
      ) {
        assert.deepEqual(read.message[k], m[k], `${JSON.stringify(raw)}: ${k}`);
      }
    }
  }
});

Deno.test("readUsage reads what Usage.parse reads: numbers kept, other types and non-object details absent", () => {
  const usages: Record<string, unknown>[] = [
    { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    { prompt_tokens: "10", completion_tokens: null, prompt_cache_hit_tokens: 4, cache_write_tokens: 1 },
    { prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: "x" }, completion_tokens_details: [] },
    { prompt_tokens_details: null, completion_tokens_details: { reasoning_tokens: 7 } },
    { prompt_tokens_details: 5, server_tool_use: { web_search_requests: 2 } },
    { server_tool_use: { web_search_requests: true }, completion_tokens_details: "x" },
    {},
  ];
  // The fields usage.ts reads (Usage passes unknown ones through), without the absent ones.
  const read: Record<string, string[]> = {
    prompt_tokens: [],
    completion_tokens: [],
    prompt_cache_hit_tokens: [],
    cache_write_tokens: [],
    prompt_tokens_details: ["cached_tokens", "cache_write_tokens"],
    completion_tokens_details: ["reasoning_tokens"],
    server_tool_use: ["web_search_requests"],
  };
  const fields = (v: Record<string, unknown>, names: string[]) =>
    Object.fromEntries(names.filter((k) => v[k] !== undefined).map((k) => [k, v[k]]));
  const defined = (u: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(read).filter(([k]) => u[k] !== undefined).map((
        [k, inner],
      ) => [k, inner.length ? fields(u[k] as Record<string, unknown>, inner) : u[k]]),
    );
  for (const raw of usages) {
    assert.deepEqual(defined({ ...readUsage(raw) }), defined(Usage.parse(raw)), JSON.stringify(raw));
  }
});
