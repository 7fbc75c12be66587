import assert from "node:assert/strict";
import type { SseFrame } from "./codec.ts";
import { PlainStream } from "../util/plain_streams.ts";
import { streamChunks } from "../util/chunk_source.ts";
import { replaySse, sseFrameReader } from "./sse_parse.ts";

Deno.test("replaySse yields the same frames whatever the byte cuts", async () => {
  const text = 'event: a\ndata: {"x":"é"}\n\n: comment\n\ndata: line1\ndata: line2\n\r\ndata: [DONE]\n\n';
  const whole = await replaySse(text);
  assert.deepEqual(whole, [
    { event: "a", data: '{"x":"é"}' },
    { data: "line1\nline2" },
    { data: "[DONE]" },
  ]);
  const len = new TextEncoder().encode(text).length;
  for (let cut = 1; cut < len; cut++) {
    assert.deepEqual(await replaySse(text, [cut, cut + 3]), whole);
  }
});

Deno.test("sseFrameReader reads a byte stream BYOB through a growing buffer and yields its frames whole", async () => {
  const frame = (i: number) => `data: {"i":${i},"pad":"${"é".repeat(i % 300)}"}\n\n`;
  const text = Array.from({ length: 200 }, (_, i) => frame(i)).join("");
  const bytes = new TextEncoder().encode(text);
  // One small chunk, then the rest at once (far past the 1 KiB first read, so reads grow), then a tail.
  const cuts = [100, bytes.length - 50, bytes.length];
  const body = new ReadableStream<Uint8Array>({
    type: "bytes",
    start(c) {
      let prev = 0;
      for (const cut of cuts) {
        c.enqueue(bytes.slice(prev, cut));
        prev = cut;
      }
      c.close();
    },
  });
  const frames = sseFrameReader(streamChunks(body));
  const seen: SseFrame[] = [];
  let reads = 0;
  for (let batch = await frames.read(); batch; batch = await frames.read()) {
    reads++;
    assert.ok(batch.length > 0, "a batch is never empty");
    seen.push(...batch);
  }
  assert.deepEqual(seen, await replaySse(text));
  assert.equal(seen.length, 200);
  // 44,890 bytes: a fixed 1 KiB buffer would take 44 reads, a fixed 4 KiB one 11.
  assert.ok(reads <= 10, `${reads} batches: the read buffer grew`);
  assert.equal(await frames.read(), undefined, "ended stays ended");
});

Deno.test("sseFrameReader reads a PlainStream with the default reader, without a BYOB probe", async () => {
  const text = 'data: {"a":1}\n\ndata: [DONE]\n\n';
  const modes: (string | undefined)[] = [];
  const plain = (Stream: typeof ReadableStream<Uint8Array> = ReadableStream) => {
    const body = new Stream({
      start(c) {
        c.enqueue(new TextEncoder().encode(text));
        c.close();
      },
    });
    const getReader = body.getReader.bind(body) as (o?: { mode?: "byob" }) => ReadableStreamDefaultReader;
    (body as { getReader: unknown }).getReader = (o?: { mode?: "byob" }) => {
      modes.push(o?.mode);
      return getReader(o);
    };
    return body;
  };
  const read = async (body: ReadableStream<Uint8Array>) => {
    const frames = sseFrameReader(streamChunks(body));
    const out: SseFrame[] = [];
    for (let batch = await frames.read(); batch; batch = await frames.read()) out.push(...batch);
    return out;
  };
  const want = [{ data: '{"a":1}' }, { data: "[DONE]" }];
  // Unmarked: the probe throws, then the default reader.
  assert.deepEqual(await read(plain()), want);
  assert.deepEqual(modes, ["byob", undefined]);
  modes.length = 0;
  assert.deepEqual(await read(plain(PlainStream)), want);
  assert.deepEqual(modes, [undefined]);
});
