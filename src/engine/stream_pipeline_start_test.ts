/** Before the 200 goes out: StreamPipeline.start (the family's before-content check), and a pipeline made before it opens. */
import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { InFlight } from "../util/in_flight.ts";
import { type StreamOutcome, StreamPipeline } from "./stream_pipeline.ts";
import {
  comment,
  ev,
  finish,
  pipeline,
  pipelineOptions,
  start,
  text,
  upstream,
  usage,
} from "./testing/stream_pipeline.ts";

Deno.test("StreamPipeline.start without a before-content check reads nothing before the 200", async () => {
  const up = upstream([[start], [text("a"), finish]]);
  const p = pipeline(up.batches);
  assert.equal(await p.start(), undefined);
  assert.equal(up.state.pulls, 0);
  assert.deepEqual(await p.rest(), ["start\n", "text:a\nfinish\n"]);
});

Deno.test("StreamPipeline.start runs the before-content check up to the first content; what it read goes out on the first pull", async () => {
  const up = upstream([[comment], [start], [usage(5, 0), text("a")], [text("b")], [finish]]);
  const seen: string[] = [];
  const p = pipeline(up.batches, { beforeContent: (e) => (seen.push(e.type), undefined) });
  assert.equal(await p.start(), undefined);
  assert.equal(up.state.pulls, 3, "read up to the batch with the first content event, no further");
  assert.deepEqual(await p.rest(), ["start\nusage\ntext:a\n", "text:b\n", "finish\n"]);
  assert.deepEqual(seen, ["start", "usage", "text_delta"], "checked up to the first content event only");
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.refused, undefined);
});

Deno.test("StreamPipeline.start refuses on a finish that comes before any content", async () => {
  const up = upstream([[start, usage(5, 0)], [ev({ type: "finish", reason: "content_filter" })]]);
  const p = pipeline(up.batches, {
    beforeContent: (e) =>
      e.type === "finish" && e.reason === "content_filter" ? new GatewayError("cyber_refusal") : undefined,
  });
  assert.equal((await p.start())?.code, "cyber_refusal");
  assert.equal(p.outcomes[0]!.refused, true);
  assert.deepEqual(await p.rest(), []);
});

Deno.test("StreamPipeline.start returns the family's refusal of the first event and reports it refused, once", async () => {
  const up = upstream([[start, text("secret")], [finish]]);
  const p = pipeline(up.batches, {
    beforeContent: (e) => e.type === "start" ? new GatewayError("cyber_refusal") : undefined,
  });
  const refusal = await p.start();
  assert.equal(refusal?.code, "cyber_refusal");
  assert.equal(p.aborts(), 1);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.refused, true);
  assert.equal(p.outcomes[0]!.error?.code, "cyber_refusal");
  assert.deepEqual(await p.rest(), [], "nothing is streamed after a refusal");
});

Deno.test("StreamPipeline.start keeps an upstream cut before the first event for the stream's error frame", async () => {
  const up = upstream([[comment], new Error("connection reset")]);
  const p = pipeline(up.batches, { beforeContent: () => undefined });
  assert.equal(await p.start(), undefined);
  assert.deepEqual(await p.rest(), ["error:stream_service_error:req_t\n"]);
  assert.equal(p.outcomes[0]!.events, 0);
});

Deno.test("StreamPipeline made without batches registers nothing until it opens; opened, it runs as one made with them", async () => {
  const cut = new InFlight();
  const opened: unknown[] = [];
  const outcomes: StreamOutcome[] = [];
  const made = () =>
    new StreamPipeline(pipelineOptions({
      onDone: (o) => outcomes.push(o),
      onOpen: (c) => opened.push(c),
      cut,
    }));
  const dropped = made(); // a call that failed: never opened
  const kept = made();
  assert.equal(opened.length, 0, "not told of the stream before it opens");
  const up = upstream([[start], [text("a"), finish]]);
  const reader = kept.open(up.batches, undefined).readable.getReader();
  assert.equal(opened.length, 1);
  const dec = new TextDecoder();
  const chunks: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(dec.decode(r.value));
  assert.deepEqual(chunks, ["start\n", "text:a\nfinish\n"]);
  assert.equal(outcomes.length, 1);
  assert.equal(outcomes[0]!.finished, true);
  await cut.drain(0, new GatewayError("service_unavailable"), 0);
  assert.equal(outcomes.length, 1, "the pipeline never opened is not cut: it was never registered");
  assert.equal(opened.length, 1);
  assert.equal(dropped.readable.locked, false);
});
