/**
 * The runtime floor for the benchmark: a bare Deno proxy with no logic at all — Deno.serve → fetch
 * upstream → return the body. Whatever this costs over going direct is Deno's own HTTP server + fetch,
 * which every Deno gateway pays before doing any work of its own.
 *
 * Env: UPSTREAM (base URL, e.g. http://127.0.0.1:8080), PORT, HOST (default 127.0.0.1).
 */
const upstream = Deno.env.get("UPSTREAM");
if (!upstream) throw new Error("UPSTREAM is required");
const port = Number(Deno.env.get("PORT") ?? 0);
const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
const STREAM = /"stream"\s*:\s*true/;

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
    return new Response(res.body, { status: res.status, headers: { "content-type": "text/event-stream" } });
  }
  return new Response(await res.text(), {
    status: res.status,
    headers: { "content-type": "application/json" },
  });
});
