import assert from "node:assert/strict";
import { isPlain } from "../util/plain_streams.ts";
import type { ResponseHead } from "../http1/head.ts";
import { bodyChunks, WireResponse } from "./upstream_response.ts";

const enc = new TextEncoder();

const head = (status: number, headers: [string, string][] = []): ResponseHead => ({
  status,
  statusText: "Whatever",
  headers,
  framing: { kind: "length", length: 0 },
  keepAlive: true,
});

/** A body read off the wire in `parts`, one per read; its cancels counted. */
const sourceOf = (...parts: Uint8Array[]) => {
  const left = [...parts];
  const source = {
    cancels: 0,
    next: () => Promise.resolve(left.shift()),
    cancel: () => {
      source.cancels++;
      left.length = 0;
      return Promise.resolve();
    },
  };
  return source;
};

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
    sourceOf(bytes.subarray(0, 4), bytes.subarray(4, 9), bytes.subarray(9)),
  );
  assert.equal(await res.text(), "ab привет cd");
  assert.equal(await new WireResponse(head(200), sourceOf(bytes)).text(), "ab привет cd");
  const none = new WireResponse(head(204), null);
  assert.equal(none.body, null);
  assert.equal(await none.text(), "");
});

Deno.test("wire response: a streamed body's chunks are its own source, no stream made; asked for, a plain stream", async () => {
  const parts = [enc.encode("data: 1\n\n"), enc.encode("data: 2\n\n")];
  const source = sourceOf(...parts);
  const res = new WireResponse(head(200), source);
  assert.equal(bodyChunks(res), source);

  const streamed = new WireResponse(head(200), sourceOf(...parts));
  const body = streamed.body!;
  assert.equal(isPlain(body), true);
  assert.equal(streamed.body, body, "the same stream each time");
  const reader = body.getReader();
  assert.deepEqual((await reader.read()).value, parts[0]);
  assert.deepEqual((await reader.read()).value, parts[1]);
  assert.equal((await reader.read()).done, true);

  const cancelled = sourceOf(...parts);
  await new WireResponse(head(200), cancelled).body!.cancel();
  assert.equal(cancelled.cancels, 1, "a cancelled stream cancels its source");
});

Deno.test("wire response: a body that came whole is one chunk; a Fetch body is read through a reader", async () => {
  const bytes = enc.encode("data: 1\n\n");
  const whole = bodyChunks(new WireResponse(head(200), bytes))!;
  assert.deepEqual(await whole.next(), bytes);
  assert.equal(await whole.next(), undefined);
  assert.equal(bodyChunks(new WireResponse(head(204), null)), null);

  const fetched = bodyChunks(new Response("data: 2\n\n"))!;
  assert.equal(new TextDecoder().decode(await fetched.next()), "data: 2\n\n");
  assert.equal(await fetched.next(), undefined);
  assert.equal(bodyChunks(new Response(null, { status: 204 })), null);
});

Deno.test("wire response: a body held as text reads as that text once; its bytes are the text's UTF-8", async () => {
  const text = '{"привет":1}';
  const asText = new WireResponse(head(200), text);
  assert.equal(await asText.text(), text);
  await assert.rejects(() => asText.text(), TypeError);

  const asStream = new WireResponse(head(200), text);
  const reader = asStream.body!.getReader();
  assert.deepEqual((await reader.read()).value, enc.encode(text));
  assert.equal((await reader.read()).done, true);

  const chunks = bodyChunks(new WireResponse(head(200), text))!;
  assert.deepEqual(await chunks.next(), enc.encode(text));
  assert.equal(await chunks.next(), undefined);
});
