/**
 * The gateway's own work per request, in one process: the request handler (src/http/server.ts) of a gateway on
 * a KV file, billing on, its upstream calls answered by a stub with bench/chat_mock.ts's answer (the JSON
 * completion, or its 23 stream frames in one read) — no sockets, no Deno HTTP server, no mock process, so neither the
 * network's wall time nor the loopback's wake-ups are in it. Requests run 32 at a time in batches of 320 with a
 * timer turn between batches (the group commit's rounds run there, as between a served load's I/O turns).
 * Per round: wall time and the process's CPU (every thread: KV's SQLite writer and V8's helpers too) per
 * request, after a warm-up round.
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort bench/handler_cost.ts [ROUNDS]
 *
 * HANDLER_LOAD=json (default) or stream; HANDLER_REQUESTS per round (default 40,000). HANDLER_LOAD=agent is a
 * coding agent's request instead: Claude Code's first call (tests/fixtures/clients/claude_code.json: its tools,
 * system and messages) followed by AGENT_TURNS (default 60) turns of a text and a tool call answered by a tool
 * result of 480 characters of code, ≈50 KB in all, on beta-sonnet-5 (Messages to a Messages upstream, the
 * client's bytes forwarded with the family's system prompt), non-streaming; HANDLER_REQUESTS defaults to 2,000
 * there. With `--cpu-prof` the profile shows the gateway's stages alone (bench/profile.ts). docs/performance.md
 * "JSON path: the gateway's own work" says what it found.
 */
import process from "node:process";
import { parseConfig } from "../src/config/env.ts";
import { type Gateway, startGateway } from "../src/gateway.ts";
import { createHandler } from "../src/http/server.ts";
import { WireResponse } from "../src/upstream/upstream_response.ts";
import { wholeChunks } from "../src/util/chunk_source.ts";
import { COMPLETION, streamFrames } from "./chat_mock.ts";
import { envNum } from "./env.ts";
import { percentile } from "./load.ts";
import { ADMIN_TOKEN } from "./procs.ts";
import { chat, PATH } from "./scenarios.ts";

export type HandlerLoad = "json" | "stream" | "agent";

export interface HandlerRound {
  requests: number;
  wallUs: number;
  /** Process CPU (user + system, all threads) per request. */
  cpuUs: number;
  sysUs: number;
}

export interface HandlerBench {
  gw: Gateway;
  /** Upstream calls the stub answered. */
  upstreamCalls(): number;
  /** Runs `requests` requests; throws on an answer other than the expected 200. */
  round(requests: number): Promise<HandlerRound>;
  close(): Promise<void>;
}

const CONCURRENCY = 32;
const BATCH = 320;
const encoder = new TextEncoder();
const JSON_BYTES = encoder.encode(COMPLETION);
/** The stream's frames in one piece: the mock queues them at once, so the upstream read takes them together. */
const STREAM_BYTES = encoder.encode(streamFrames().join(""));

/** The agent load's answer, as a Messages upstream sends it (the model the client asked for: forwarded as is). */
const AGENT_ANSWER = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "beta-sonnet-5",
  content: [{ type: "text", text: "Done: every module read." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12_000, output_tokens: 9 },
});

/** The stub's answer: a head read off the wire and its body, whole (JSON) or as one read of its frames. */
function stubAnswer(load: HandlerLoad): WireResponse {
  if (load !== "stream") {
    const bytes = load === "json" ? JSON_BYTES : encoder.encode(AGENT_ANSWER);
    return new WireResponse({
      status: 200,
      statusText: "OK",
      headers: [["content-type", "application/json"], ["content-length", String(bytes.length)]],
      framing: { kind: "length", length: bytes.length },
      keepAlive: true,
    }, bytes);
  }
  return new WireResponse({
    status: 200,
    statusText: "OK",
    headers: [["content-type", "text/event-stream"], ["transfer-encoding", "chunked"]],
    framing: { kind: "chunked" },
    keepAlive: true,
  }, wholeChunks(STREAM_BYTES));
}

/** A line of a source file, with quotes to escape, as a tool result carries one. */
const CODE_LINE = `export function parse(line: string): Entry {\n  const [key, value] = line.split("=");\n`;
/** 480 characters of code. */
const CODE = CODE_LINE.repeat(6).slice(0, 480);

/** The agent load's request: Claude Code's first call, then `turns` turns of a tool call and its result. */
function agentRequest(turns: number): { path: string; body: string; headers: Record<string, string> } {
  const fixture = JSON.parse(
    Deno.readTextFileSync(new URL("../tests/fixtures/clients/claude_code.json", import.meta.url)),
  ) as { headers: Record<string, string>; betas: string[]; body: { messages: unknown[] } };
  const messages = [...fixture.body.messages];
  for (let n = 0; n < turns; n++) {
    const id = `toolu_bench${String(n).padStart(4, "0")}`;
    messages.push(
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading the next module." },
          { type: "tool_use", id, name: "Read", input: { file_path: `/tmp/work/src/module_${n}.ts` } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: CODE }] },
    );
  }
  return {
    path: "/v1/messages",
    body: JSON.stringify({ ...fixture.body, model: "beta-sonnet-5", stream: false, messages }),
    headers: { ...fixture.headers, "anthropic-beta": fixture.betas.join(",") },
  };
}

export async function handlerBench(load: HandlerLoad, dataDir: string): Promise<HandlerBench> {
  const gw = await startGateway(
    parseConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      ALPHA_UPSTREAM_URL: "http://127.0.0.1:9", // never dialled: the stub below answers
      ALPHA_UPSTREAM_KEY: "up-alpha",
      BETA_UPSTREAM_URL: "http://127.0.0.1:9",
      BETA_UPSTREAM_KEY: "up-beta",
      MAX_INFLIGHT_UPSTREAM: "0",
    }),
    { logSink: () => {} }, // the line is built as in production; only the stdout write is left out
  );
  let calls = 0;
  gw.app.upstreamFetch = () => {
    calls++;
    return Promise.resolve(stubAnswer(load));
  };
  const handler = createHandler(gw.app);
  const meta = { fallbackHost: "localhost", peer: "127.0.0.1" };
  const completed = Promise.resolve();
  const created = await handler(
    new Request("http://localhost/admin/keys", {
      method: "POST",
      headers: {
        host: "localhost",
        authorization: `Bearer ${ADMIN_TOKEN}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ balance_usd: "100000.00" }),
    }),
    meta,
    completed,
  );
  const { key } = await created.json();
  const request = load === "agent"
    ? agentRequest(envNum("AGENT_TURNS", 60))
    : { path: PATH, body: chat("Say hello in one short sentence.", load === "stream"), headers: {} };
  // As wrk sends it: bytes, with their length (src/request/body.ts reads a declared length in one call).
  const bodyBytes = encoder.encode(request.body);
  const headers = {
    ...request.headers,
    host: "localhost",
    "content-type": "application/json",
    "content-length": String(bodyBytes.length),
    authorization: `Bearer ${key}`,
  };
  // The client gets the upstream's bytes: the stream's frames but its usage chunk (this client asks for none).
  const expected = load === "json"
    ? COMPLETION
    : load === "agent"
    ? AGENT_ANSWER
    : streamFrames().filter((f) => !f.includes('"usage"')).join("");

  const one = async () => {
    const res = await handler(
      new Request(`http://localhost${request.path}`, { method: "POST", headers, body: bodyBytes }),
      meta,
      completed,
    );
    const text = await res.text();
    if (res.status !== 200 || text !== expected) {
      throw new Error(`unexpected answer ${res.status}: ${text.slice(0, 300)}`);
    }
  };
  const batch = async (n: number) => {
    let started = 0;
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
      while (started++ < n) await one();
    }));
  };
  return {
    gw,
    upstreamCalls: () => calls,
    async round(requests) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      for (let done = 0; done < requests; done += BATCH) {
        await batch(Math.min(BATCH, requests - done));
        await new Promise((r) => setTimeout(r, 0));
      }
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(c0);
      return {
        requests,
        wallUs: (wall * 1000) / requests,
        cpuUs: (cpu.user + cpu.system) / requests,
        sysUs: cpu.system / requests,
      };
    },
    close: () => gw.close(),
  };
}

if (import.meta.main) {
  const load = (Deno.env.get("HANDLER_LOAD") ?? "json") as HandlerLoad;
  const requests = envNum("HANDLER_REQUESTS", load === "agent" ? 2_000 : 40_000);
  const rounds = Number(Deno.args[0] ?? 5);
  const dir = await Deno.makeTempDir({ prefix: "gw-handler-" });
  const bench = await handlerBench(load, dir);
  try {
    await bench.round(requests); // warm-up: V8 compiles the request path
    const all: HandlerRound[] = [];
    for (let r = 0; r < rounds; r++) {
      const x = await bench.round(requests);
      all.push(x);
      console.log(
        `${load} round ${r}: ${x.wallUs.toFixed(1)} µs wall, ${x.cpuUs.toFixed(1)} µs CPU ` +
          `(system ${x.sysUs.toFixed(1)}) per request`,
      );
    }
    const median = (f: (x: HandlerRound) => number) => percentile(Float64Array.from(all, f).sort(), 50);
    console.log(
      `median: ${median((x) => x.wallUs).toFixed(1)} µs wall, ${median((x) => x.cpuUs).toFixed(1)} µs CPU`,
    );
  } finally {
    await bench.close();
    await Deno.remove(dir, { recursive: true });
  }
}
