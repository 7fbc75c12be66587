/**
 * The runtime floor for the benchmark: a bare Deno proxy with no logic at all — Deno.serve → fetch
 * upstream → return the body. Whatever this costs over going direct is Deno's own HTTP server + fetch,
 * which every Deno gateway pays before doing any work of its own.
 *
 * Env: UPSTREAM (base URL, e.g. http://127.0.0.1:8080), PORT, HOST (default 127.0.0.1), PUMP: unset, the
 * upstream body is handed to the response as it is (the runtime pipes it natively); `js`, every chunk goes
 * through a JavaScript stream (read, enqueue); `sse`, each chunk is also decoded, parsed into SSE frames and
 * encoded again — the least any gateway that reads the frames must do (README "Performance").
 */
import { createParser } from "eventsource-parser";
const upstream = Deno.env.get("UPSTREAM");
if (!upstream) throw new Error("UPSTREAM is required");
const port = Number(Deno.env.get("PORT") ?? 0);
const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
const STREAM = /"stream"\s*:\s*true/;
const PUMP = Deno.env.get("PUMP");

/** The upstream body re-emitted through JavaScript, as PUMP says. */
function pumped(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let out = "";
  const parser = createParser({ onEvent: (e) => out += `data: ${e.data}\n\n` });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      if (PUMP !== "sse") return controller.enqueue(value);
      parser.feed(decoder.decode(value, { stream: true }));
      if (out !== "") controller.enqueue(encoder.encode(out));
      out = "";
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

Deno.serve({ port, hostname, onListen() {} }, async (req) => {
  const u = new URL(req.url);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const text = hasBody ? await req.text() : undefined;
  const headers: Record<string, string> = {};
  const ct = req.headers.get("content-type");
  const auth = req.headers.get("authorization");
  if (ct) headers["content-type"] = ct;
  if (auth) headers["authorization"] = auth;
  const res = await fetch(`${upstream}${u.pathname}${u.search}`, { method: req.method, headers, body: text });
  if (text !== undefined && STREAM.test(text)) {
    const body = PUMP && res.body ? pumped(res.body) : res.body;
    return new Response(body, { status: res.status, headers: { "content-type": "text/event-stream" } });
  }
  return new Response(await res.text(), {
    status: res.status,
    headers: { "content-type": "application/json" },
  });
});
