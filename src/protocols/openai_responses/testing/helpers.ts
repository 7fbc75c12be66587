/** Shared test fixtures and helpers (not a test file itself). */
import type { EncodeContext, SseFrame } from "../../codec.ts";
import type { IREvent } from "../../../ir/events.ts";
import type { IRRequest } from "../../../ir/request.ts";
import { replaySse } from "../../sse_parse.ts";
import { ResponsesStreamDecoder } from "../stream_decode.ts";
import { createStreamEncoder } from "../stream_encode.ts";
import assert from "node:assert/strict";

export function baseRequest(over: Partial<IRRequest> = {}): IRRequest {
  return {
    model: "client-model",
    system: [],
    messages: [],
    stream: true,
    includeUsage: false,
    tools: [],
    stop: [],
    ...over,
  };
}

/** Deterministic context: ids `<prefix>1`, `<prefix>2`, … and a fixed clock. */
export function testCtx(request: Partial<IRRequest> = {}, model = "client-model"): EncodeContext {
  let n = 0;
  return {
    requestId: "req_test",
    model,
    now: () => 1_700_000_000,
    newId: (prefix) => `${prefix}${++n}`,
    request: baseRequest(request),
  };
}

export function fixture(name: string): Promise<string> {
  return Deno.readTextFile(new URL(`./fixtures/${name}`, import.meta.url));
}

// deno-lint-ignore no-explicit-any
export type Parsed = { event?: string; data: any };

/** Parses SSE text through the real parser and JSON-decodes every data field. */
export async function parseSse(text: string): Promise<Parsed[]> {
  const frames = await replaySse(text);
  return frames.map((f) => ({ event: f.event, data: JSON.parse(f.data) }));
}

export function decodeFrames(frames: SseFrame[]): IREvent[] {
  const d = new ResponsesStreamDecoder();
  return [...frames.flatMap((f) => d.push(f)), ...d.end()];
}

/** Byte offsets to split a fixture at: edges, a stride, and a few odd places. */
export function cutSets(text: string): number[][] {
  const len = new TextEncoder().encode(text).length;
  const stride = (n: number) => Array.from({ length: Math.floor(len / n) }, (_, i) => (i + 1) * n);
  return [[], [1], [len - 1], [Math.floor(len / 2)], stride(7), stride(64), [3, 17, 18, 19, 401, len - 2]];
}

/** The client text the stream encoder makes of `events`. */
export function encode(events: IREvent[], ctx = testCtx()): string {
  const enc = createStreamEncoder(ctx);
  return events.map((e) => enc.push(e)).join("");
}

/** Gap-free sequence numbers, created → in_progress first, exactly one terminal event. */
export function checkLifecycle(frames: Parsed[], terminal: string): void {
  frames.forEach((f, i) => {
    assert.equal(f.data.sequence_number, i, `sequence_number of frame ${i}`);
    assert.equal(f.event, f.data.type);
  });
  assert.deepEqual(frames.slice(0, 2).map((f) => f.event), ["response.created", "response.in_progress"]);
  assert.equal(frames[0]!.data.response.status, "in_progress");
  assert.deepEqual(frames[0]!.data.response.output, []);
  assert.equal(frames[0]!.data.response.usage, null);
  assert.equal(frames.at(-1)!.event, terminal);
  assert.equal(frames.filter((f) => /^response\.(completed|incomplete|failed)$/.test(f.event!)).length, 1);
}

export const start: IREvent = { type: "start", id: "up_1", model: "upstream" };
export const usage: Extract<IREvent, { type: "usage" }> = {
  type: "usage",
  usage: { inputTokens: 12, cachedInputTokens: 4, outputTokens: 7, reasoningTokens: 2 },
};
