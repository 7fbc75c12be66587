/**
 * The minimal OpenAI Chat upstream of the side-by-side section (bench/side_by_side.ts): a fixed
 * answer, pre-encoded, so the mock costs as little as possible per request.
 *
 * POST (any path) answers by the request body:
 * - `"stream": true` → an SSE stream of 20 content chunks, the finish chunk, the usage chunk and
 *   `data: [DONE]` (23 frames, each its own body chunk, all queued at once);
 * - the body also holds HOLD_MARK → only the first content chunk, then nothing until the client goes away
 *   (an idle stream; the rest follows after HOLD_MAX_MS so a forgotten stream still ends);
 * - else one fixed `chat.completion` JSON.
 * GET answers 200 "ok" (readiness).
 *
 * Env: PORT, HOST (default 127.0.0.1), HOLD_MAX_MS (default 120000).
 */

export const HOLD_MARK = "[[bench:hold]]";
/** Frames of one full stream: 20 content chunks + finish + usage + [DONE]. */
export const STREAM_FRAMES = 23;
export const CONTENT_CHUNKS = 20;

const HEAD = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764000000,"model":"k3",' +
  '"system_fingerprint":"fp_bench",';
const USAGE = `{"prompt_tokens":12,"completion_tokens":${CONTENT_CHUNKS},"total_tokens":${
  12 + CONTENT_CHUNKS
}}`;
const chunk = (delta: string, finish = "null") =>
  `data: ${HEAD}"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}\n\n`;

/** The stream's frames as text, in order (also what a test or the bench's check expects to see). */
export function streamFrames(): string[] {
  const words = Array.from({ length: CONTENT_CHUNKS }, (_, i) => `word${i} `);
  return [
    chunk(`{"role":"assistant","content":${JSON.stringify(words[0])}}`),
    ...words.slice(1).map((w) => chunk(`{"content":${JSON.stringify(w)}}`)),
    chunk("{}", '"stop"'),
    `data: ${HEAD}"choices":[],"usage":${USAGE}}\n\n`,
    "data: [DONE]\n\n",
  ];
}

/** The fixed `chat.completion` answer (340 bytes). */
export const COMPLETION = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1764000000,
  model: "k3",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "Hello! How can I help you today?", refusal: null },
    logprobs: null,
    finish_reason: "stop",
  }],
  usage: JSON.parse(USAGE),
  system_fingerprint: "fp_bench",
});

if (import.meta.main) {
  const port = Number(Deno.env.get("PORT") ?? 0);
  const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
  const holdMaxMs = Number(Deno.env.get("HOLD_MAX_MS") ?? 120_000);
  const enc = new TextEncoder();
  const frames = streamFrames().map((f) => enc.encode(f));
  const json = enc.encode(COMPLETION);
  const STREAM = /"stream"\s*:\s*true/;
  const sse = { "content-type": "text/event-stream", "cache-control": "no-cache" };

  Deno.serve({ port, hostname, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response("ok");
    const text = await req.text();
    if (!STREAM.test(text)) return new Response(json, { headers: { "content-type": "application/json" } });
    if (!text.includes(HOLD_MARK)) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (const f of frames) c.enqueue(f);
          c.close();
        },
      });
      return new Response(body, { headers: sse });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const held = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(frames[0]!);
        timer = setTimeout(() => {
          for (const f of frames.slice(1)) c.enqueue(f);
          c.close();
        }, holdMaxMs);
      },
      cancel() {
        clearTimeout(timer);
      },
    });
    return new Response(held, { headers: sse });
  });
}
