import assert from "node:assert/strict";
import { isPlain } from "../util/plain_streams.ts";
import type { ResponseHead } from "../http1/head.ts";
import { WireResponse } from "./upstream_response.ts";

const enc = new TextEncoder();

const head = (status: number, headers: [string, string][] = []): ResponseHead => ({
  status,
  statusText: "Whatever",
  headers,
  framing: { kind: "length", length: 0 },
  keepAlive: true,
});

const streamOf = (...parts: Uint8Array[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });

Deno.test("wire response: status, ok as Fetch's, header fields by any case, repeated ones joined", () => {
  const res = new WireResponse(
    head(200, [["x-a", "1"], ["retry-after", "7"], ["x-a", "2"]]),
    null,
  );
  assert.equal(res.status, 200);
  assert.equal(res.statusText, "Whatever");
  assert.equal(res.headers.get("Retry-After"), "7");
  assert.equal(res.headers.get("x-a"), "1, 2");
  assert.equal(res.headers.get("x-b"), null);
  assert.deepEqual(
    [199, 200, 204, 299, 300, 404, 503].map((s) => new WireResponse(head(s), null).ok),
    [false, true, true, true, false, false, false],
  );
});

Deno.test("wire response: a body that came whole reads as text once, or as a plain stream of its bytes", async () => {
  const bytes = enc.encode('{"привет":1}');
  const asText = new WireResponse(head(200), bytes);
  assert.equal(await asText.text(), '{"привет":1}');
  await assert.rejects(() => asText.text(), TypeError);

  const asStream = new WireResponse(head(200), bytes);
  const body = asStream.body!;
  assert.equal(isPlain(body), true);
  assert.equal(asStream.body, body, "the same stream each time");
  const reader = body.getReader();
  assert.deepEqual((await reader.read()).value, bytes);
  assert.equal((await reader.read()).done, true);
});

Deno.test("wire response: a streamed body's text, a character split between chunks; no body is empty", async () => {
  const bytes = enc.encode("ab привет cd");
  const res = new WireResponse(
    head(200),
    streamOf(bytes.subarray(0, 4), bytes.subarray(4, 9), bytes.subarray(9)),
  );
  assert.equal(await res.text(), "ab привет cd");
  assert.equal(await new WireResponse(head(200), streamOf(bytes)).text(), "ab привет cd");
  const none = new WireResponse(head(204), null);
  assert.equal(none.body, null);
  assert.equal(await none.text(), "");
});
