/** Shared helpers for this folder's tests (fixtures, a deterministic EncodeContext). */
import type { IREvent } from "../../../ir/events.ts";
import type { IRRequest } from "../../../ir/request.ts";
import type { EncodeContext, SseFrame } from "../../codec.ts";
import { replaySse } from "../../sse_parse.ts";
import { AnthropicStreamDecoder } from "../stream_decode.ts";

export function fixture(name: string): string {
  return Deno.readTextFileSync(new URL(`./fixtures/${name}`, import.meta.url));
}

export function baseRequest(over: Partial<IRRequest> = {}): IRRequest {
  return {
    model: "alpha-large",
    system: [],
    messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    stream: true,
    includeUsage: false,
    tools: [],
    stop: [],
    ...over,
  };
}

export function testContext(request: IRRequest = baseRequest()): EncodeContext {
  let n = 0;
  return {
    requestId: "req_test",
    model: "alpha-large",
    now: () => 1_700_000_000,
    newId: (prefix) => `${prefix}${++n}`,
    request,
  };
}

export function decodeFrames(frames: SseFrame[]): IREvent[] {
  const d = new AnthropicStreamDecoder();
  return [...frames.flatMap((f) => d.push(f)), ...d.end()];
}

/** Parses SSE text (ours or recorded) back into frames with the real parser. */
export function frames(text: string): Promise<SseFrame[]> {
  return replaySse(text);
}

/** `[event, parsed data]` pairs, for asserting an exact emitted sequence. */
export async function parsedFrames(text: string): Promise<[string | undefined, unknown][]> {
  return (await replaySse(text)).map((f) => [f.event, JSON.parse(f.data)]);
}
