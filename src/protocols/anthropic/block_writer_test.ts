import assert from "node:assert/strict";
import { replaySse } from "../sse_parse.ts";
import { BlockWriter } from "./block_writer.ts";

async function shape(text: string): Promise<string[]> {
  return (await replaySse(text)).map((f) => {
    const d = JSON.parse(f.data);
    return `${d.type}:${d.index}${d.delta ? ":" + d.delta.type : ""}`;
  });
}

Deno.test("BlockWriter keeps one open block with increasing indexes", async () => {
  const w = new BlockWriter();
  const out = w.thinking("a") + w.signature("s") + w.text("b") + w.thinking("c") + w.finish();
  assert.deepEqual(await shape(out), [
    "content_block_start:0",
    "content_block_delta:0:thinking_delta",
    "content_block_delta:0:signature_delta",
    "content_block_stop:0",
    "content_block_start:1",
    "content_block_delta:1:text_delta",
    "content_block_stop:1",
    "content_block_start:2",
    "content_block_delta:2:thinking_delta",
    "content_block_stop:2",
  ]);
});

Deno.test("BlockWriter flushes buffered tool calls in index order at finish", async () => {
  const w = new BlockWriter();
  let out = w.toolStart(0, "a", "f") + w.toolStart(2, "c", "h") + w.toolStart(1, "b", "g");
  out += w.toolDelta(2, '{"z":1}') + w.toolDelta(1, '{"y":') + w.toolDelta(0, '{"x":0}') +
    w.toolDelta(1, "2}");
  out += w.finish();
  const frames = (await replaySse(out)).map((f) => JSON.parse(f.data));
  const starts = frames.filter((f) => f.type === "content_block_start").map((f) => f.content_block.id);
  assert.deepEqual(starts, ["a", "b", "c"]);
  const args = frames.filter((f) => f.type === "content_block_delta").map((
    f,
  ) => [f.index, f.delta.partial_json]);
  assert.deepEqual(args, [[0, '{"x":0}'], [1, '{"y":2}'], [2, '{"z":1}']]);
});

Deno.test("BlockWriter ignores empty text, unknown tool indexes and a repeated tool start", () => {
  const w = new BlockWriter();
  assert.equal(w.text(""), "");
  assert.equal(w.toolDelta(5, "{}"), "");
  assert.notEqual(w.toolStart(0, "a", "f"), "");
  assert.equal(w.toolStart(0, "a", "f"), "");
  assert.equal(w.toolDelta(0, ""), "");
});
