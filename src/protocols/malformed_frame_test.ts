/**
 * The one malformed-upstream-frame policy (wire_frame.ts), replayed from a recorded fixture per
 * protocol: Anthropic a frame cut inside its JSON, Chat a chunk whose `choices` is an object, Responses
 * an `output_text.delta` whose `delta` is an object. The decoder and the relay throw
 * UpstreamProtocolError at that frame, and the engine's stream then ends with the surface's one error
 * frame (`stream_service_error`), never with its success ending.
 */
import assert from "node:assert/strict";
import { type StreamMode, type StreamOutcome, StreamPipeline } from "../engine/stream_pipeline.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { IRRequest } from "../ir/request.ts";
import { type EncodeContext, type ProtocolName, type SseFrame, UpstreamProtocolError } from "./codec.ts";
import { PROTOCOLS } from "./registry.ts";
import { replaySse, sseFrameReader } from "./sse_parse.ts";
import { streamChunks } from "../util/chunk_source.ts";

function fixture(protocol: ProtocolName): string {
  return Deno.readTextFileSync(
    new URL(`./${protocol}/testing/fixtures/malformed_frame.sse`, import.meta.url),
  );
}

function context(): EncodeContext {
  const request: IRRequest = {
    model: "client-model",
    system: [],
    messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    stream: true,
    includeUsage: false,
    tools: [],
    stop: [],
  };
  let n = 0;
  return {
    requestId: "req_test",
    model: "client-model",
    now: () => 1_700_000_000,
    newId: (p) => `${p}${++n}`,
    request,
  };
}

/** Index of the malformed frame in each fixture (frames before it are well-formed). */
const BAD_FRAME: Record<ProtocolName, number> = { anthropic: 4, openai_chat: 1, openai_responses: 5 };

/** Runs the fixture through the engine's stream pipeline; returns the client's frames and the outcome. */
async function pipe(text: string, mode: StreamMode): Promise<{ frames: SseFrame[]; outcome: StreamOutcome }> {
  let outcome: StreamOutcome | undefined;
  const body = new Response(text).body!;
  const out = new StreamPipeline({
    batches: sseFrameReader(streamChunks(body)),
    mode,
    requestId: "req_test",
    heartbeatMs: 60_000,
    idleTimeoutMs: 60_000,
    upstreamError: () => new GatewayError("stream_service_error"),
    inspect: () => undefined,
    abortUpstream: () => {},
    onDone: (o) => {
      outcome = o;
    },
  });
  const frames = await replaySse(await new Response(out.readable).text());
  return { frames, outcome: outcome! };
}

/** The surface's error ending: Messages `error`; Chat `{"error"}` + `[DONE]`; Responses `error` + `response.failed`. */
function assertErrorEnding(protocol: ProtocolName, frames: SseFrame[], where: string): void {
  const last = frames.at(-1)!;
  const error = protocol === "anthropic" ? last : frames.at(-2)!;
  const json = JSON.parse(error.data);
  if (protocol === "anthropic") {
    assert.equal(error.event, "error", where);
    assert.ok(!frames.some((f) => f.event === "message_stop"), where);
  } else if (protocol === "openai_chat") {
    assert.equal(last.data, "[DONE]", where);
    assert.ok(!frames.some((f) => f.data.includes('"finish_reason":"stop"')), where);
  } else {
    assert.equal(error.event, "error", where);
    assert.equal(last.event, "response.failed", where);
    assert.ok(!frames.some((f) => f.event === "response.completed"), where);
  }
  assert.equal(json.error.code, "stream_service_error", where);
  assert.equal(frames.filter((f) => f.event === "error" || f.data.startsWith('{"error"')).length, 1, where);
}

for (const protocol of Object.keys(PROTOCOLS) as ProtocolName[]) {
  const codec = PROTOCOLS[protocol];

  Deno.test(`${protocol} stream decoder throws UpstreamProtocolError at the malformed recorded frame`, async () => {
    const frames = await replaySse(fixture(protocol));
    const decoder = codec.createStreamDecoder();
    frames.slice(0, BAD_FRAME[protocol]).forEach((f) => decoder.push(f));
    assert.throws(() => decoder.push(frames[BAD_FRAME[protocol]]!), UpstreamProtocolError);
  });

  Deno.test(`${protocol} relay throws UpstreamProtocolError at the malformed recorded frame`, async () => {
    const frames = await replaySse(fixture(protocol));
    const relay = codec.createRelay(context());
    frames.slice(0, BAD_FRAME[protocol]).forEach((f) => relay.push(f));
    assert.throws(() => relay.push(frames[BAD_FRAME[protocol]]!), UpstreamProtocolError);
  });

  Deno.test(`${protocol} malformed frame ends the translated and the relayed stream with the one error frame`, async () => {
    const text = fixture(protocol);
    const modes: [string, () => StreamMode][] = [
      ["translate", () => ({
        kind: "translate",
        decoder: codec.createStreamDecoder(),
        encoder: codec.createStreamEncoder(context()),
      })],
      ["relay", () => ({ kind: "relay", relay: codec.createRelay(context()) })],
    ];
    for (const [name, mode] of modes) {
      const { frames, outcome } = await pipe(text, mode());
      const where = `${protocol} ${name}`;
      assertErrorEnding(protocol, frames, where);
      assert.equal(outcome.error?.code, "stream_service_error", where);
      assert.equal(outcome.finished, false, where);
    }
  });
}
