import assert from "node:assert/strict";
import { ChunkedDecoder } from "./chunked.ts";
import { Http1Failure } from "./failure.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A chunked body with an extension, an empty-looking chunk of CRLFs in its data, and a trailer. */
const CHUNKED = "5;name=v\r\nhello\r\n4\r\n\r\n\r\n\r\nA\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\n";
const DATA = "hello\r\n\r\n0123456789";

/** Feeds `wire` cut at `cuts` as reads into one buffer the way the client does (unused bytes kept). */
function decodeCut(wire: Uint8Array, cuts: number[]): { data: string; done: boolean } {
  const d = new ChunkedDecoder();
  const out: Uint8Array[] = [];
  let start = 0;
  for (const end of [...cuts, wire.length]) {
    const { data, used } = d.push(wire, start, end);
    out.push(...data.map((v) => v.slice()));
    start += used;
  }
  return { data: text(out), done: d.done };
}

Deno.test("http1 chunked: the same data whatever the reads, cut at every byte and every pair of bytes", () => {
  const wire = bytes(CHUNKED);
  assert.deepEqual(decodeCut(wire, []), { data: DATA, done: true });
  for (let i = 1; i < wire.length; i++) {
    assert.deepEqual(decodeCut(wire, [i]), { data: DATA, done: true }, `cut at ${i}`);
    for (let j = i + 1; j < wire.length; j += 3) {
      assert.deepEqual(decodeCut(wire, [i, j]), { data: DATA, done: true }, `cuts at ${i}, ${j}`);
    }
  }
  // Not done until the trailer section's blank line.
  assert.equal(decodeCut(wire.subarray(0, wire.length - 2), []).done, false);
});

Deno.test("http1 chunked: a bad size, data not followed by CRLF or an endless size line fails", () => {
  for (const wire of ["z\r\n", "5\r\nhelloXX", "-1\r\n", "12345678901234\r\n"]) {
    assert.throws(
      () => new ChunkedDecoder().push(bytes(wire), 0, wire.length),
      Http1Failure,
      wire,
    );
  }
  const long = bytes("1" + ";x".repeat(3000));
  assert.throws(() => new ChunkedDecoder().push(long, 0, long.length), Http1Failure);
  // A 21-digit size overflows no integer here: refused before it is read.
  const huge = bytes("1".repeat(21) + "\r\n");
  assert.throws(() => new ChunkedDecoder().push(huge, 0, huge.length), /invalid chunk size/);
});

Deno.test("http1 chunked: a trailer section is bounded like a head; within the bound it is read past", () => {
  const line = "x-t: " + "a".repeat(1000) + "\r\n";
  const within = bytes("0\r\n" + line.repeat(60) + "\r\n");
  const d = new ChunkedDecoder();
  assert.equal(d.push(within, 0, within.length).used, within.length);
  assert.equal(d.done, true);
  const endless = bytes("0\r\n" + line.repeat(70));
  assert.throws(() => new ChunkedDecoder().push(endless, 0, endless.length), /trailer section too large/);
});

Deno.test("http1 chunked: sizes in either case, whitespace around them, extensions; 13 hex digits exact", () => {
  const wire = bytes("A \r\n0123456789\r\n\tb;ext=1\r\nhello world\r\n0 ;last\r\n\r\n");
  const d = new ChunkedDecoder();
  const { data, used } = d.push(wire, 0, wire.length);
  assert.equal(text(data), "0123456789hello world");
  assert.deepEqual([used, d.done], [wire.length, true]);
  // The largest size allowed (2^52 − 1) is read exactly: the data that follows is all data.
  const big = new ChunkedDecoder();
  const head = bytes("FFFFFFFFFFFFF\r\nabc");
  const got = big.push(head, 0, head.length);
  assert.equal(text(got.data), "abc");
  assert.equal(big.done, false);
  for (const bad of ["\r\n", ";x\r\n", "1 2\r\n", "0x1\r\n", "g\r\n", " \r\n"]) {
    assert.throws(() => new ChunkedDecoder().push(bytes(bad), 0, bad.length), Http1Failure, bad);
  }
});
