import assert from "node:assert/strict";
import { Chunk, ChunkChoice, readChunk } from "./wire.ts";

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
