/**
 * The runtime floor for the benchmark: a bare Deno proxy with no logic at all — Deno.serve → fetch
 * upstream → return the body. Whatever this costs over going direct is Deno's own HTTP server + fetch,
 * which every Deno gateway pays before doing any work of its own.
 *
 * Env: UPSTREAM (base URL, e.g. http://127.0.0.1:8080), PORT, HOST (default 127.0.0.1), PUMP: unset, the
 * upstream body is handed to the response as it is (the runtime pipes it natively); `js`, every chunk goes
 * through a JavaScript stream (read, enqueue); `sse`, each chunk is also decoded, parsed into SSE frames and
 * encoded again — the least any gateway that reads the frames must do; `byob`, the
 * chunks go through a JavaScript stream read BYOB into a reused 1 KiB buffer, as the gateway reads its
 * upstream (the least a JavaScript hop holds per idle stream). METER (JSON
 * answers): unset, none; `parse`, the request body and the upstream's answer are parsed and the answer's
 * `usage` and `model` read — the least a gateway that meters must do; `kv`, that and one usage row per
 * request made durable in Deno KV (a file in KV_DIR) the way the gateway's group commit does it: the rows of a
 * round (5 ms after the first, or at once when rows waited behind the commit in flight) in one atomic
 * operation with a sum per key (needs --unstable-kv and --allow-read/--allow-write). CLIENT: unset, Deno's
 * fetch; `wire`, the gateway's own upstream client (src/upstream/wire_client.ts): what fetch itself costs.
 * SPIN_US: a busy loop of that many µs per request, to run the proxy at another process's rate
 * (an A/B variant of bench/ab.ts). SERVE: unset, `Deno.serve`; `deadlines`, the gateway's own listener
 * (src/http/serve.ts: one Deno HTTP server per connection, for the header and idle deadlines): what those cost.
 * ANSWER_HEAD (JSON answers): unset, only the content type; `fields`, also the four fields the gateway's
 * answer carries (request-id and, for family alpha, x-request-id: spec §2.5; x-gateway-hold-usd,
 * x-gateway-worker) with values of the same length; `fields-chunked`, those and chunked coding, as the gateway
 * sends it (src/request/one_write.ts); `spec` and `spec-chunked`, only the two fields spec §2.5 asks for. Deno 2.9's server writes an answer of known length in one write only
 * while head and body fit in 512 bytes together: the bench's 340-byte answer does with this proxy's head and
 * does not with the gateway's fields; chunked, it is one write either way.
 * SIGTERM exits normally, so a --cpu-prof profile is written.
 */
import { createParser } from "eventsource-parser";
import { serveGateway } from "../src/http/serve.ts";
import { WireClient } from "../src/upstream/wire_client.ts";
import { Logger } from "../src/util/log.ts";
import { ONE_WRITE } from "../src/util/one_write.ts";
import { GATEWAY_ANSWER_FIELDS, SPEC_ANSWER_FIELDS } from "./scenarios.ts";
const upstream = Deno.env.get("UPSTREAM");
if (!upstream) throw new Error("UPSTREAM is required");
const port = Number(Deno.env.get("PORT") ?? 0);
const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
const STREAM = /"stream"\s*:\s*true/;
const PUMP = Deno.env.get("PUMP");
const METER = Deno.env.get("METER");
const wire = Deno.env.get("CLIENT") === "wire" ? new WireClient() : undefined;
const never = new AbortController().signal;
const ANSWER_HEAD = Deno.env.get("ANSWER_HEAD");
const answerHead: Record<string, string> = {
  "content-type": "application/json",
  ...ANSWER_HEAD?.startsWith("fields") ? GATEWAY_ANSWER_FIELDS : {},
  ...ANSWER_HEAD?.startsWith("spec") ? SPEC_ANSWER_FIELDS : {},
  ...ANSWER_HEAD?.endsWith("-chunked") ? ONE_WRITE : {},
};
const spinMs = Number(Deno.env.get("SPIN_US") ?? 0) / 1000;
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
const rows = METER === "kv" ? await usageRows(`${Deno.env.get("KV_DIR") ?? "."}/bare-proxy.kv`) : undefined;

/** A group commit of usage rows shaped like the gateway's (src/store/types.ts UsageRow), on Deno KV. */
async function usageRows(path: string): Promise<(row: Record<string, unknown>) => void> {
  const kv = await Deno.openKv(path);
  let pending: Record<string, unknown>[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight = false;
  const round = async () => {
    timer = undefined;
    inflight = true;
    const batch = pending;
    pending = [];
    // Rows that piled up behind a slow commit go in atomics of at most 900 rows, as the store cuts them
    // (KV refuses more than 1000 mutations in one).
    for (let i = 0; i < batch.length; i += 900) {
      const op = kv.atomic();
      let spent = 0n;
      for (const r of batch.slice(i, i + 900)) {
        op.set(["usage", "key_bench", r.createdAt as number, r.requestId as string], r);
        spent += r.charged as bigint;
      }
      op.sum(["money", "key_bench", "spent"], spent);
      await op.commit();
    }
    inflight = false;
    if (pending.length > 0) timer = setTimeout(round, 0);
  };
  return (row) => {
    pending.push(row);
    if (!inflight && timer === undefined) timer = setTimeout(round, 5);
  };
}

let seq = 0;
/** What metering reads of a JSON answer (METER), and the usage row it writes. */
function meter(requestText: string, answerText: string): void {
  const request = JSON.parse(requestText);
  const answer = JSON.parse(answerText);
  const usage = answer.usage ?? {};
  if (!rows) return;
  const now = Date.now();
  rows({
    requestId: `req_bench_${++seq}`,
    keyId: "key_bench",
    family: "alpha",
    model: String(request.model ?? answer.model),
    endpoint: "/v1/chat/completions",
    stream: false,
    status: "ok",
    createdAt: now,
    inputTokens: usage.prompt_tokens ?? 0,
    cachedInputTokens: 0,
    outputTokens: usage.completion_tokens ?? 0,
    webSearchRequests: 0,
    reserved: 4_000_000_000n,
    charged: 12_000_000n,
    writtenOff: 0n,
    usageSource: "upstream",
    rates: { input: 1_000_000n, cacheRead: 100_000n, output: 4_000_000n, search: 0n },
  });
}

/** The upstream body re-emitted through JavaScript, as PUMP says. */
function pumped(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  if (PUMP === "byob") return pumpedByob(body);
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

/** PUMP=byob: each chunk read into a reused buffer (transferred by the read, taken back) and enqueued as a copy. */
function pumpedByob(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader({ mode: "byob" });
  let buffer = new Uint8Array(1024);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read(buffer);
      if (done || !value) return controller.close();
      buffer = new Uint8Array(value.buffer);
      controller.enqueue(value.slice());
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

async function proxy(req: Request): Promise<Response> {
  if (spinMs) { for (const t = performance.now(); performance.now() - t < spinMs;); }
  const u = new URL(req.url);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const text = hasBody ? await req.text() : undefined;
  const headers: Record<string, string> = {};
  const ct = req.headers.get("content-type");
  const auth = req.headers.get("authorization");
  if (ct) headers["content-type"] = ct;
  if (auth) headers["authorization"] = auth;
  const target = `${upstream}${u.pathname}${u.search}`;
  const res = wire
    ? await wire.fetch(target, { method: req.method, headers, body: text ?? "", signal: never })
    : await fetch(target, { method: req.method, headers, body: text });
  if (text !== undefined && STREAM.test(text)) {
    const body = PUMP && res.body ? pumped(res.body) : res.body;
    return new Response(body, { status: res.status, headers: { "content-type": "text/event-stream" } });
  }
  const answer = await res.text();
  if (METER && text !== undefined) meter(text, answer);
  return new Response(answer, { status: res.status, headers: answerHead });
}

if (Deno.env.get("SERVE") === "deadlines") serveGateway({ hostname, port, log: new Logger("warn") }, proxy);
else Deno.serve({ port, hostname, onListen() {} }, proxy);
