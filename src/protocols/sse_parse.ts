import { EventSourceParserStream } from "eventsource-parser/stream";
import type { SseFrame } from "./codec.ts";

/** Upstream body bytes → parsed SSE frames (the standard parser; no hand-made line splitting). */
export function sseFrames(body: ReadableStream<Uint8Array>): ReadableStream<SseFrame> {
  return body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .pipeThrough(
      new TransformStream({
        transform(msg, controller) {
          controller.enqueue(msg.event ? { event: msg.event, data: msg.data } : { data: msg.data });
        },
      }),
    );
}

/** Test helper: replay recorded SSE text through the real parser, cut into byte chunks at `cuts`. */
export async function replaySse(text: string, cuts: number[] = []): Promise<SseFrame[]> {
  const bytes = new TextEncoder().encode(text);
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let prev = 0;
      for (const p of [...points, bytes.length]) {
        controller.enqueue(bytes.slice(prev, p));
        prev = p;
      }
      controller.close();
    },
  });
  const out: SseFrame[] = [];
  for await (const f of sseFrames(body)) out.push(f);
  return out;
}
