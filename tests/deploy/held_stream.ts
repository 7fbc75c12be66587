/**
 * The stream check both proxies' tests share: an alpha upstream (Chat Completions) that writes its first
 * content frame, then holds the stream open until the test has received that frame through the proxy, then
 * finishes. A proxy that buffers delivers the frame only after the upstream's last one: the upstream stops
 * holding after HOLD_MS and says so, and the check fails.
 */
import assert from "node:assert/strict";

const HOLD_MS = 10_000;
const FIRST = "первый";
const REST = " второй";

const frame = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "k3",
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  }\n\n`;

/** The held upstream: `release()` lets it finish; `heldOut` tells whether it gave up waiting. */
export function heldStreamUpstream() {
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  let heldOut = false;
  const enc = new TextEncoder();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, () => {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    (async () => {
      await writer.write(enc.encode(frame({ role: "assistant", content: "" }) + frame({ content: FIRST })));
      const timer = setTimeout(() => {
        heldOut = true;
        release();
      }, HOLD_MS);
      await released;
      clearTimeout(timer);
      await writer.write(enc.encode(frame({ content: REST }) + frame({}, "stop") + "data: [DONE]\n\n"));
      await writer.close();
    })().catch(() => {/* the gateway went away: nothing left to write */});
    return new Response(readable, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    release: () => release(),
    get heldOut() {
      return heldOut;
    },
    close: async () => {
      release();
      await server.shutdown();
    },
  };
}

/**
 * A streamed chat request to `base` (the proxy) with `key`: the first content frame must arrive while the
 * upstream still holds the stream, and the rest with [DONE] after it is released.
 */
export async function assertFirstFrameBeforeLast(
  base: string,
  key: string,
  upstream: ReturnType<typeof heldStreamUpstream>,
  client?: Deno.HttpClient,
): Promise<void> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: "k3",
      stream: true,
      max_tokens: 50,
      messages: [{ role: "user", content: "Привет" }],
    }),
    client,
  });
  if (res.status !== 200) assert.fail(`${res.status} ${await res.text()}`);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(FIRST)) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the stream ended before its first frame: ${text}`);
    text += value;
  }
  assert.equal(upstream.heldOut, false, "the first frame arrived only after the upstream's last one");
  upstream.release();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  assert.ok(text.includes(REST), text);
  assert.ok(text.trimEnd().endsWith("data: [DONE]"), text);
}
