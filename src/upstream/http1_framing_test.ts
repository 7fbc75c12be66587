import assert from "node:assert/strict";
import { ChunkedDecoder, headEnd, parseHead, UpstreamProtocolFailure } from "./http1_framing.ts";

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

Deno.test("http1 head: status, fields in order (names lowercased, values trimmed), Content-Length framing, keep-alive", () => {
  const head = parseHead(
    bytes(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id:  a b \r\nContent-Length: 12\r\n\r\n",
    ),
  );
  assert.deepEqual(head, {
    status: 200,
    statusText: "OK",
    headers: [["content-type", "application/json"], ["x-request-id", "a b"], ["content-length", "12"]],
    framing: { kind: "length", length: 12 },
    keepAlive: true,
  });
});

Deno.test("http1 head: chunked wins over Content-Length and the connection is then not reused (RFC 9112 §6.3)", () => {
  const chunked = parseHead(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"));
  assert.deepEqual([chunked.framing, chunked.keepAlive], [{ kind: "chunked" }, true]);
  const both = parseHead(bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"));
  assert.deepEqual([both.framing, both.keepAlive], [{ kind: "chunked" }, false]);
});

Deno.test("http1 head: no length → read to the end of the connection; Connection: close and HTTP/1.0 are not reused", () => {
  const eof = parseHead(bytes("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"));
  assert.deepEqual([eof.framing, eof.keepAlive], [{ kind: "close" }, false]);
  const close = parseHead(
    bytes("HTTP/1.1 503 Service Unavailable\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n"),
  );
  assert.deepEqual([close.status, close.framing, close.keepAlive], [
    503,
    { kind: "length", length: 0 },
    false,
  ]);
  const old = parseHead(bytes("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n"));
  assert.equal(old.keepAlive, false);
});

Deno.test("http1 head: 1xx, 204 and 304 have no body; an empty reason phrase is allowed", () => {
  for (const status of [100, 103, 204, 304]) {
    const h = parseHead(bytes(`HTTP/1.1 ${status}\r\nContent-Length: 10\r\n\r\n`));
    assert.deepEqual([h.status, h.statusText, h.framing], [status, "", { kind: "none" }]);
  }
});

Deno.test("http1 head: what a client must not read is refused", () => {
  const bad = [
    "HTTP/2 200\r\n\r\n",
    "ICY 200 OK\r\n\r\n",
    "HTTP/1.1 20 OK\r\n\r\n",
    "HTTP/1.1 200 OK\r\nno-colon\r\n\r\n",
    "HTTP/1.1 200 OK\r\n folded: value\r\n\r\n",
    "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    // A value Fetch's Headers would refuse (RFC 9110 §5.5): NUL, a bare CR, a bare LF.
    "HTTP/1.1 200 OK\r\nx-a: b\0c\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-a: b\rc\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-a: b\nc\r\n\r\n",
    // A status under 100 is no interim head (RFC 9110 §15).
    "HTTP/1.1 099 OK\r\n\r\n",
    // A field name is a token with no whitespace before its colon (RFC 9112 §5.1): read one way here and
    // another by a proxy, it splits a response.
    "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length\t: 5\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx a: b\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx@a: b\r\n\r\n",
    // A Content-Length past 15 digits (2^53 is 16), chunked applied twice (RFC 9112 §6.1).
    "HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
    // Transfer-Encoding in HTTP/1.0: faulty framing (RFC 9112 §6.1).
    "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
  ];
  for (const head of bad) {
    assert.throws(() => parseHead(bytes(head)), UpstreamProtocolFailure, JSON.stringify(head));
  }
  // The same length twice is one length.
  assert.deepEqual(
    parseHead(bytes("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n")).framing,
    { kind: "length", length: 3 },
  );
});

Deno.test("http1 head: its end is found at any offset, also with the blank line split over reads", () => {
  const all = bytes("xxHTTP/1.1 200 OK\r\nA: b\r\n\r\nbody");
  const end = all.length - 4;
  assert.equal(headEnd(all, 2, all.length), end);
  for (let to = 2; to < end; to++) assert.equal(headEnd(all, 2, to), -1, `to ${to}`);
  assert.equal(headEnd(all, 2, end), end);
});

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
      UpstreamProtocolFailure,
      wire,
    );
  }
  const long = bytes("1" + ";x".repeat(3000));
  assert.throws(() => new ChunkedDecoder().push(long, 0, long.length), UpstreamProtocolFailure);
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
    assert.throws(() => new ChunkedDecoder().push(bytes(bad), 0, bad.length), UpstreamProtocolFailure, bad);
  }
});

Deno.test("http1 head: a header value with bytes past ASCII is read one code point per byte", () => {
  const h = parseHead(
    new Uint8Array([
      ...bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Name: caf"),
      0xe9,
      ...bytes("\r\n\r\n"),
    ]),
  );
  assert.deepEqual(h.headers.find(([n]) => n.toLowerCase() === "x-name"), ["x-name", "café"]);
});
