/**
 * A burst (every frame already read when the stream starts): the first client chunk is on the wire before the
 * rest is translated (util/yield_turn.ts), the rest of its own read included. Served by `Deno.serve` to a client in another process, which leaves
 * a marker file once it holds the first chunk; the translation of the burst's second batch waits for that
 * marker synchronously, as a slow translation would hold the event loop.
 */
import assert from "node:assert/strict";
import type { IREvent } from "../ir/events.ts";
import type { SseFrame } from "../protocols/codec.ts";
import { finish, pipelineOptions, start, text, upstream, usage } from "./testing/stream_pipeline.ts";
import { StreamPipeline } from "./stream_pipeline.ts";

/** Polls for the file without returning to the event loop; false after `ms`. */
function seenWithin(path: string, ms: number): boolean {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      Deno.statSync(path);
      return true;
    } catch { /* not yet */ }
  }
  return false;
}

const CLIENT = `
const [url, marker] = Deno.args;
const reader = (await fetch(url)).body.getReader();
const dec = new TextDecoder();
let all = "";
for (let first = true;; first = false) {
  const { done, value } = await reader.read();
  if (done) break;
  all += dec.decode(value);
  if (first) Deno.writeTextFileSync(marker, "");
}
console.log(JSON.stringify(all));
`;

/**
 * Serves one pipeline over `batches` to a client process; `inspect` may wait for the client's first chunk
 * (`seenWithin(marker)`). Returns what the client read in all and the pipeline's `finished` outcomes.
 */
async function served(
  batches: SseFrame[][],
  inspect: (e: IREvent, marker: string) => void,
): Promise<{ all: string; outcomes: unknown[] }> {
  const dir = await Deno.makeTempDir();
  const marker = `${dir}/first-chunk`;
  const up = upstream(batches);
  const outcomes: unknown[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    const pipe = new StreamPipeline(pipelineOptions({
      batches: up.batches,
      inspect: (e) => (inspect(e, marker), undefined),
      onDone: (o) => outcomes.push(o.finished),
    }));
    return new Response(pipe.readable, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", CLIENT, `http://127.0.0.1:${server.addr.port}/`, marker],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    assert.equal(out.code, 0);
    return { all: JSON.parse(new TextDecoder().decode(out.stdout)), outcomes };
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("StreamPipeline: the first chunk of a burst reaches the client before the rest is translated", async () => {
  let seen: boolean | undefined;
  const { all, outcomes } = await served(
    [[start, text("Hi")], [text(" there")], [usage(2, 3), finish]],
    (e, m) => {
      if (e.type === "text_delta" && e.text === " there") seen = seenWithin(m, 5_000);
    },
  );
  assert.equal(all, "start\ntext:Hi\ntext: there\nusage\nfinish\n");
  assert.equal(seen, true, "the first chunk was written before the second batch was translated");
  assert.deepEqual(outcomes, [true]);
});

Deno.test("StreamPipeline: the first text of a read reaches the client before the rest of that read is translated", async () => {
  let seen: boolean | undefined;
  const { all, outcomes } = await served(
    [[start, text("Hi"), text(" there")], [usage(2, 3), finish]],
    (e, m) => {
      if (e.type === "text_delta" && e.text === "Hi") seen = seenWithin(m, 5_000);
    },
  );
  assert.equal(all, "start\ntext:Hi\ntext: there\nusage\nfinish\n");
  assert.equal(
    seen,
    true,
    "the first frame's text was written before the next frame of its read was translated",
  );
  assert.deepEqual(outcomes, [true]);
});
