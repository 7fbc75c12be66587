/**
 * What building an upstream answer costs in-process (issue 18; bench/RESULTS.md "Upstream answers without a
 * Response"): Deno's Response with the head's header fields, without them, their Headers alone, a
 * ReadableStream, and the wire client's WireResponse. Each the median of 7 passes of 100,000.
 *
 *   deno run bench/response_cost.ts
 */
import type { ResponseHead } from "../src/upstream/http1_framing.ts";
import { WireResponse } from "../src/upstream/upstream_response.ts";

const body = new TextEncoder().encode(
  '{"id":"chatcmpl-1","object":"chat.completion","model":"k3","choices":[],"usage":{"prompt_tokens":9}}',
);
const fields: [string, string][] = [
  ["content-type", "application/json"],
  ["date", "Wed, 25 Nov 2026 10:00:00 GMT"],
  ["content-length", String(body.length)],
  ["x-request-id", "req_0123456789"],
  ["connection", "keep-alive"],
];
const head: ResponseHead = {
  status: 200,
  statusText: "OK",
  headers: fields,
  framing: { kind: "length", length: body.length },
  keepAlive: true,
};

let sink = 0;
const N = 100_000;
function nsEach(build: () => { status?: number } | Headers | ReadableStream): number {
  const passes: number[] = [];
  for (let p = 0; p < 7; p++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) if (build()) sink++;
    passes.push((performance.now() - t0) * 1e6 / N);
  }
  return passes.sort((a, b) => a - b)[3]!;
}

const rows: [string, () => { status?: number } | Headers | ReadableStream][] = [
  [
    "new Response(bytes, { status, statusText, headers })",
    () => new Response(body, { status: 200, statusText: "OK", headers: fields }),
  ],
  [
    "new Response(bytes, { status, statusText })",
    () => new Response(body, { status: 200, statusText: "OK" }),
  ],
  ["new Headers(fields)", () => new Headers(fields)],
  [
    "new ReadableStream({ pull }, { highWaterMark: 0 })",
    () => new ReadableStream({ pull() {} }, { highWaterMark: 0 }),
  ],
  ["new WireResponse(head, bytes)", () => new WireResponse(head, body)],
];
console.log(`deno ${Deno.version.deno}, ns per construction (median of 7 × ${N.toLocaleString("en")})`);
for (const [name, build] of rows) console.log(`${nsEach(build).toFixed(0).padStart(6)}  ${name}`);
if (sink === 0) console.log("(nothing built)");
