import assert from "node:assert/strict";
import { Http1Failure } from "./failure.ts";
import { headEnd, parseHead as parseAny } from "./head.ts";

/** The upstream client's rules (wire_client.ts); the lenient ones are tested at the end. */
const parseHead = (head: Uint8Array) => parseAny(head, "strict");

const bytes = (s: string) => new TextEncoder().encode(s);

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
    assert.throws(() => parseHead(bytes(head)), Http1Failure, JSON.stringify(head));
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

Deno.test("http1 head, lenient: what a web server may send is read as Fetch reads it", () => {
  const lenient = (head: string) => parseAny(bytes(head), "lenient");
  const spaced = lenient("HTTP/1.1 200 OK\r\nContent-Length : 5\r\nX-A:\tb \r\n\r\n");
  assert.deepEqual([spaced.headers, spaced.framing], [
    [["content-length", "5"], ["x-a", "b"]],
    { kind: "length", length: 5 },
  ]);
  for (const repeated of ["Content-Length: 5, 5\r\n", "Content-Length: 5\r\nContent-Length: 5 ,5\r\n"]) {
    assert.deepEqual(lenient(`HTTP/1.1 200 OK\r\n${repeated}\r\n`).framing, { kind: "length", length: 5 });
  }
  // Transfer-Encoding present: chunked when it comes last, else the body runs to the end; no length is read.
  assert.deepEqual(lenient("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").framing, {
    kind: "chunked",
  });
  assert.deepEqual(
    lenient("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: x\r\n\r\n").framing,
    {
      kind: "close",
    },
  );
  assert.deepEqual(lenient("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").framing, {
    kind: "chunked",
  });
  // The framing fields of an interim head are not read; a status under 100 is read past as an interim one.
  assert.equal(lenient("HTTP/1.1 100 Continue\r\nContent-Length: x\r\n\r\n").status, 100);
  assert.deepEqual([lenient("HTTP/1.1 050 X\r\n\r\n").status, lenient("HTTP/1.1 050 X\r\n\r\n").framing], [
    50,
    { kind: "none" },
  ]);
  // A bare CR at a value's edge is trimmed away, as Fetch's Headers trims it.
  assert.deepEqual(lenient("HTTP/1.1 204 No Content\r\nX-A: b\r\r\n\r\n").headers, [["x-a", "b"]]);
});

Deno.test("http1 head, lenient: what even Fetch would not read is refused", () => {
  const bad = [
    "HTTP/2 200\r\n\r\n",
    "HTTP/1.1 200 OK\r\nno-colon\r\n\r\n",
    "HTTP/1.1 200 OK\r\n folded: value\r\n\r\n",
    "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx a: b\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-a: b\0c\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-a: b\nc\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
    "HTTP/1.1 204 No Content\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999\r\n\r\n",
  ];
  for (const head of bad) {
    assert.throws(() => parseAny(bytes(head), "lenient"), Http1Failure, JSON.stringify(head));
  }
});
