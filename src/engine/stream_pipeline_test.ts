import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { emptyUsage } from "../ir/usage.ts";
import { baseRequest, testContext } from "../protocols/anthropic/testing/helpers.ts";
import { PROTOCOLS } from "../protocols/registry.ts";
import { replaySse } from "../protocols/sse_parse.ts";
import { SSE_HEARTBEAT } from "../protocols/sse.ts";
import type { StreamDecoder } from "../protocols/codec.ts";
import {
  comment,
  ev,
  fakeEncoder,
  fakeRelay,
  finish,
  pipeline,
  sleep,
  start,
  text,
  translate,
  upstream,
  usage,
} from "./testing/stream_pipeline.ts";

Deno.test("StreamPipeline writes one client chunk per upstream batch, the first text alone, and reports a normal end once", async () => {
  const up = upstream([[start, text("Hi")], [comment], [text(" there")], [usage(7, 3), finish]]);
  const p = pipeline(up.batches);
  assert.equal(
    await p.next(),
    "start\n",
    "the first text goes out before the rest of its read is translated",
  );
  assert.equal(up.state.pulls, 1);
  assert.equal(await p.next(), "text:Hi\n", "the rest of that read, without reading on");
  assert.equal(up.state.pulls, 1);
  // A batch that encodes to nothing is not a write: the same pull reads on.
  assert.deepEqual(await p.rest(), ["text: there\n", "usage\nfinish\n"]);
  assert.deepEqual(p.outcomes, [{
    usage: { ...emptyUsage(), inputTokens: 7, outputTokens: 3 },
    deliveredChars: 8,
    events: 5,
    finished: true,
    cancelled: false,
  }]);
  assert.equal(p.aborts(), 0);
});

Deno.test("StreamPipeline reads the upstream only when the client pulls", async () => {
  const up = upstream([[start], [text("a")], [text("b")], [finish]]);
  const p = pipeline(up.batches);
  await sleep(20);
  assert.equal(up.state.pulls, 0, "nothing is read before the client asks");
  assert.equal(await p.next(), "start\n");
  await sleep(20);
  assert.equal(up.state.pulls, 1, "one upstream read per client pull, nothing read ahead");
  assert.equal(await p.next(), "text:a\n");
  await sleep(20);
  assert.equal(up.state.pulls, 2);
  await p.rest();
});

Deno.test("StreamPipeline ends an upstream cut with one error frame and reports it once", async () => {
  const up = upstream([[start, text("par")], new Error("connection reset")]);
  const faults: unknown[] = [];
  const p = pipeline(up.batches, { onFault: (err) => faults.push(err) });
  assert.deepEqual(await p.rest(), ["start\n", "text:par\n", "error:stream_service_error:req_t\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error?.code, "stream_service_error");
  assert.equal(p.outcomes[0]!.finished, false);
  assert.equal(p.outcomes[0]!.cancelled, false);
  assert.equal(p.outcomes[0]!.deliveredChars, 3);
  assert.equal(p.aborts(), 1);
  assert.deepEqual(faults.map(String), ["Error: connection reset"]);
});

Deno.test("StreamPipeline sends the GatewayError a decoder throws as the error frame", async () => {
  const up = upstream([[start], [comment]]);
  const decoder: StreamDecoder = {
    push: (f) => {
      if (f.data === "") throw new GatewayError("upstream_invalid_response");
      return [JSON.parse(f.data)];
    },
    end: () => [],
  };
  const p = pipeline(up.batches, { mode: { kind: "translate", decoder, encoder: fakeEncoder } });
  assert.deepEqual(await p.rest(), ["start\n", "error:upstream_invalid_response:req_t\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error?.code, "upstream_invalid_response");
});

Deno.test("StreamPipeline keeps the text of the frames before a malformed one in the same upstream read", async () => {
  const up = upstream([[start, text("ab"), { data: "{not json" }, text("never")]]);
  const p = pipeline(up.batches);
  assert.deepEqual(await p.rest(), ["start\n", "text:ab\nerror:stream_service_error:req_t\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.deliveredChars, 2);
});

Deno.test("StreamPipeline ends an upstream body that stops before the finish with an error frame", async () => {
  const up = upstream([[start, text("ab")]]);
  const p = pipeline(up.batches);
  assert.deepEqual(await p.rest(), ["start\n", "text:ab\n", "error:stream_service_error:req_t\n"]);
  assert.equal(p.outcomes[0]!.error?.code, "stream_service_error");
  assert.equal(p.outcomes[0]!.events, 2);
});

Deno.test("StreamPipeline sends what the decoder still held at the end, then closes", async () => {
  const up = upstream([[start, text("ab")]]);
  const p = pipeline(up.batches, { mode: translate([{ type: "finish", reason: "length" }]) });
  assert.deepEqual(await p.rest(), ["start\n", "text:ab\n", "finish\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.finished, true);
  assert.equal(p.outcomes[0]!.error, undefined);
});

Deno.test("StreamPipeline times out an upstream silent past the idle limit while a read is outstanding", async () => {
  const up = upstream([[start], "hang"]);
  const p = pipeline(up.batches, { idleTimeoutMs: 60 });
  assert.equal(await p.next(), "start\n");
  const t0 = Date.now();
  // The shared ticker's timer is unref'd (the server keeps a real process alive); here a test timer does.
  const alive = setInterval(() => {}, 10);
  let chunks: string[];
  try {
    chunks = await p.rest();
  } finally {
    clearInterval(alive);
  }
  const waited = Date.now() - t0;
  assert.deepEqual(chunks, ["error:stream_timeout:req_t\n"]);
  assert.ok(waited >= 55 && waited < 1_000, `timed out after ${waited} ms`);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error?.code, "stream_timeout");
  assert.equal(p.aborts(), 1);
  assert.equal(up.state.cancelled, true, "the upstream read is cancelled");
});

Deno.test("StreamPipeline does not time out a client that stops pulling longer than the idle limit", async () => {
  const up = upstream([[start], [text("late")], [finish]]);
  const p = pipeline(up.batches, { idleTimeoutMs: 40 });
  assert.equal(await p.next(), "start\n");
  await sleep(200); // five idle limits without a client pull: backpressure, not upstream silence
  assert.equal(p.outcomes.length, 0);
  assert.deepEqual(await p.rest(), ["text:late\n", "finish\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error, undefined);
  assert.equal(p.outcomes[0]!.finished, true);
});

Deno.test("StreamPipeline sends heartbeats while the upstream is quiet, then goes on", async () => {
  const up = upstream([[start], 250, [text("x"), finish]]);
  const p = pipeline(up.batches, { heartbeatMs: 60 });
  const chunks = await p.rest();
  const beats = chunks.filter((c) => c === SSE_HEARTBEAT).length;
  assert.ok(beats >= 2 && beats <= 5, `${beats} heartbeats in 250 ms at 60 ms`);
  assert.deepEqual(chunks.filter((c) => c !== SSE_HEARTBEAT), ["start\n", "text:x\nfinish\n"]);
  assert.equal(chunks[0], "start\n");
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error, undefined);
});

Deno.test("StreamPipeline on client cancel aborts the upstream and reports cancelled once", async () => {
  const up = upstream([[start, text("abc")], [text("never read")], [finish]]);
  const p = pipeline(up.batches);
  assert.equal(await p.next(), "start\n");
  // The rest of the first read was not translated yet: the cancel sees it all the same.
  await p.client.cancel();
  await p.client.cancel();
  assert.deepEqual(p.outcomes, [{
    usage: undefined,
    deliveredChars: 3,
    events: 2,
    finished: false,
    cancelled: true,
  }]);
  assert.equal(p.aborts(), 1);
  assert.equal(up.state.cancelled, true);
  assert.equal(up.state.pulls, 1);
});

Deno.test("StreamPipeline on cancel during an outstanding upstream read reports once and writes nothing more", async () => {
  const up = upstream([[start], "hang", [text("after")]]);
  const p = pipeline(up.batches, { idleTimeoutMs: 60 });
  assert.equal(await p.next(), "start\n");
  const pending = p.next();
  await sleep(10);
  await p.client.cancel();
  assert.equal(await pending, undefined);
  await sleep(150); // past the idle limit: no timeout after a cancel
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.cancelled, true);
  assert.equal(p.outcomes[0]!.error, undefined);
  assert.equal(p.aborts(), 1);
});

Deno.test("StreamPipeline ends the stream with the error inspect returns, after the text before it", async () => {
  const up = upstream([[start, text("ok"), text("bad"), text("more")], [finish]]);
  const p = pipeline(up.batches, {
    inspect: (e) =>
      e.type === "text_delta" && e.text === "bad" ? new GatewayError("cyber_refusal") : undefined,
  });
  assert.deepEqual(await p.rest(), ["start\n", "text:ok\nerror:cyber_refusal:req_t\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.error?.code, "cyber_refusal");
  assert.equal(p.outcomes[0]!.deliveredChars, 5, "the inspected event was counted, the next never seen");
  assert.equal(p.aborts(), 1);
});

Deno.test("StreamPipeline maps an in-band upstream error event with upstreamError", async () => {
  const up = upstream([[start, ev({ type: "error", message: "overloaded" }), text("x")]]);
  const seen: string[] = [];
  const p = pipeline(up.batches, {
    upstreamError: (e) => (seen.push(e.message), new GatewayError("upstream_unavailable")),
  });
  assert.deepEqual(await p.rest(), ["start\n", "error:upstream_unavailable:req_t\n"]);
  assert.deepEqual(seen, ["overloaded"]);
  assert.equal(p.outcomes[0]!.error?.code, "upstream_unavailable");
});

Deno.test("StreamPipeline reports events=0 when nothing was decoded", async () => {
  const up = upstream([[comment], [comment]]);
  const p = pipeline(up.batches);
  assert.deepEqual(await p.rest(), ["error:stream_service_error:req_t\n"]);
  assert.deepEqual(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.events, 0);
  assert.equal(p.outcomes[0]!.usage, undefined);
  assert.equal(p.outcomes[0]!.deliveredChars, 0);
});

Deno.test("StreamPipeline closes after the finished frames even if the upstream sends more", async () => {
  const up = upstream([[start, finish, text("late")], [text("later")]]);
  const p = pipeline(up.batches);
  assert.deepEqual(await p.rest(), ["start\n", "finish\n"]);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.events, 2, "nothing after the finish is observed");
  assert.equal(p.outcomes[0]!.deliveredChars, 0);
  assert.equal(up.state.pulls, 1);
  assert.equal(up.state.cancelled, true);
  assert.equal(p.aborts(), 0);
});

Deno.test("StreamPipeline hands onOpen a cut-now view of the outcome so far", async () => {
  const up = upstream([[start, text("abcd"), usage(5, 1)], [finish]]);
  const p = pipeline(up.batches);
  assert.deepEqual(p.cutNow(), {
    usage: undefined,
    deliveredChars: 0,
    events: 0,
    finished: false,
    cancelled: true,
  });
  assert.equal(await p.next(), "start\n");
  // The rest of that read was not translated yet: the view sees it all the same.
  assert.deepEqual(p.cutNow(), {
    usage: { ...emptyUsage(), inputTokens: 5, outputTokens: 1 },
    deliveredChars: 4,
    events: 3,
    finished: false,
    cancelled: true,
  });
  await p.rest();
  assert.equal(p.outcomes[0]!.cancelled, false);
});

Deno.test("StreamPipeline in relay mode writes relayed text, the relay's end text and its error frame", async () => {
  const ok = upstream([[start, text("hi")], [finish]]);
  const p = pipeline(ok.batches, { mode: { kind: "relay", relay: fakeRelay("tail\n") } });
  assert.deepEqual(await p.rest(), [
    `relay:${start.data}\n`,
    `relay:${text("hi").data}\n`,
    `relay:${finish.data}\n`,
  ]);
  assert.equal(p.outcomes[0]!.deliveredChars, 2);
  assert.equal(p.outcomes[0]!.finished, true);

  // The body ends without a finish: the relay's end text, then its error frame, in one write.
  const cut = upstream([[start]]);
  const q = pipeline(cut.batches, { mode: { kind: "relay", relay: fakeRelay("tail\n") } });
  assert.deepEqual(await q.rest(), [`relay:${start.data}\n`, "tail\nrelay-error:stream_service_error\n"]);
  assert.equal(q.outcomes[0]!.error?.code, "stream_service_error");
});

Deno.test("StreamPipeline translates a recorded Chat stream to Messages with the real codecs", async () => {
  const text = await Deno.readTextFile(
    new URL("../protocols/openai_chat/testing/fixtures/text_include_usage.sse", import.meta.url),
  );
  const frames = await replaySse(text);
  const up = upstream(frames.map((f) => [f]));
  const p = pipeline(up.batches, {
    mode: {
      kind: "translate",
      decoder: PROTOCOLS.openai_chat.createStreamDecoder(),
      encoder: PROTOCOLS.anthropic.createStreamEncoder(testContext(baseRequest())),
    },
  });
  const out = (await p.rest()).join("");
  const events = (await replaySse(out)).map((f) => f.event);
  assert.equal(events[0], "message_start");
  assert.equal(events.at(-1), "message_stop");
  assert.equal(events.filter((e) => e === "error").length, 0);
  assert.equal(p.outcomes.length, 1);
  assert.equal(p.outcomes[0]!.finished, true);
  assert.equal(p.outcomes[0]!.usage?.inputTokens, 16);
  assert.equal(p.outcomes[0]!.usage?.outputTokens, 300);
  assert.equal(p.outcomes[0]!.deliveredChars, "Holiday".length);
});

Deno.test("StreamPipeline ends a recorded mid-stream Chat error with exactly one Messages error frame", async () => {
  const text = await Deno.readTextFile(
    new URL("../protocols/openai_chat/testing/fixtures/mid_stream_error.sse", import.meta.url),
  );
  const up = upstream([await replaySse(text)]);
  const p = pipeline(up.batches, {
    mode: {
      kind: "translate",
      decoder: PROTOCOLS.openai_chat.createStreamDecoder(),
      encoder: PROTOCOLS.anthropic.createStreamEncoder(testContext(baseRequest())),
    },
  });
  const chunks = await p.rest();
  assert.equal(
    chunks.length,
    2,
    "the first text alone, then the rest of the read and the error frame in one write",
  );
  assert.equal((await replaySse(chunks[0]!)).some((f) => f.event === "error"), false);
  const frames = await replaySse(chunks.join(""));
  assert.equal(frames.filter((f) => f.event === "error").length, 1);
  assert.equal(frames.at(-1)!.event, "error");
  assert.equal(JSON.parse(frames.at(-1)!.data).error.type !== undefined, true);
  assert.equal(p.outcomes[0]!.error?.code, "upstream_unavailable");
  assert.equal(p.outcomes[0]!.events > 0, true);
});
