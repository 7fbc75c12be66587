/**
 * head.ts reads a head in place (the lines found with indexOf, a name matched where it stands, the bytes no field
 * may hold found once for the whole head): here it is held to the plain reading of the same rules, the text
 * split into its lines and every line checked by regular expressions, on seeded byte-level mutations of real
 * heads, under both rule sets. Same head, same fields, same framing, or the same refusal: the framing fields'
 * rules (HeadFields) are shared, the reading of the lines is what is compared. And `headEnd`, which
 * jumps from LF to LF, is held to a byte-by-byte scan on random buffers and windows.
 *
 * Replay: HEAD_FUZZ_SEED=<seed> (printed with any failure); HEAD_FUZZ_ROUNDS=<n> changes the number of heads.
 */
import assert from "node:assert/strict";
import { mulberry32 } from "../util/seeded_random.ts";
import { Http1Failure } from "./failure.ts";
import { headEnd, HeadFields, type HeadRules, parseHead, type ResponseHead } from "./head.ts";

const seed = Number(Deno.env.get("HEAD_FUZZ_SEED") ?? 0x4ead2026);
const rounds = Number(Deno.env.get("HEAD_FUZZ_ROUNDS") ?? 20_000);

/** The plain reading (RFC 9112 §4, §5, RFC 9110 §5): split at CRLF, a regular expression per line. */
function referenceHead(bytes: Uint8Array, rules: HeadRules): ResponseHead {
  const lenient = rules === "lenient";
  const text = new TextDecoder("latin1").decode(bytes);
  const lines = text.split("\r\n");
  const m = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]!);
  if (!m) throw new Http1Failure("not an HTTP/1.x status line");
  const status = Number(m[2]);
  if (status < 100 && !lenient) throw new Http1Failure(`status ${m[2]}`);
  const fields = new HeadFields(rules, m[1] === "0");
  for (let i = 1; i < lines.length - 2; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    const raw = lenient ? line.slice(0, colon).trimEnd() : line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (
      colon <= 0 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(raw) || /[\0\r\n]/.test(lenient ? value : line)
    ) {
      throw new Http1Failure("malformed header line");
    }
    fields.add(raw.toLowerCase(), value);
  }
  return fields.head(status, m[3] ?? "");
}

const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Heads as providers and web servers send them, to mutate. */
const SEEDS = [
  "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nvary: Accept-Encoding\r\ncontent-length: 340\r\n" +
  "date: Sun, 29 Nov 2026 10:00:00 GMT\r\n\r\n",
  "HTTP/1.1 200 OK\r\nDate: Sun, 29 Nov 2026 10:00:00 GMT\r\nContent-Type: text/event-stream; charset=utf-8\r\n" +
  "Transfer-Encoding: chunked\r\nConnection: keep-alive\r\nx-request-id: req_0123456789abcdef\r\n" +
  "openai-processing-ms: 412\r\nx-ratelimit-remaining-tokens: 1999950\r\nCF-RAY: 8f0123456789abcd-AMS\r\n" +
  'Set-Cookie: __cf_bm=abc; path=/; HttpOnly\r\nalt-svc: h3=":443"; ma=86400\r\n\r\n',
  "HTTP/1.0 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\nRetry-After: 2\r\n\r\n",
  "HTTP/1.1 100 Continue\r\n\r\n",
  "HTTP/1.1 204 \r\nX-A:\tb \r\n\r\n",
  "HTTP/1.1 200 OK\r\nContent-Length : 5, 5\r\nTransfer-Encoding: gzip, chunked\r\nX-Name: caf\xe9\r\n\r\n",
];

/** What a mutation inserts: the bytes lines and fields are made of, and bytes past ASCII (a BOM's included). */
const ALPHABET = [
  "\r",
  "\n",
  "\r\n",
  "\0",
  " ",
  "\t",
  "\v",
  "\xa0",
  ":",
  ",",
  "A",
  "z",
  "-",
  "0",
  "9",
  "\x80",
  "\xe9",
  "\xef\xbb\xbf",
  "\xff",
  "(",
  "\x85",
];

function mutate(rng: () => number, head: string): string {
  let s = head;
  for (let n = 1 + Math.floor(rng() * 4); n > 0; n--) {
    const at = Math.floor(rng() * (s.length + 1));
    const op = rng();
    if (op < 0.45) s = s.slice(0, at) + ALPHABET[Math.floor(rng() * ALPHABET.length)] + s.slice(at);
    else if (op < 0.75) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(rng() * 3));
    else if (op < 0.9) s = s.slice(0, at) + ALPHABET[Math.floor(rng() * ALPHABET.length)] + s.slice(at + 1);
    else s = s.slice(0, at) + s.slice(at, at + 12).toUpperCase() + s.slice(at + 12);
  }
  // Mostly a whole head, as headEnd hands it over; sometimes not, which both read the same way too.
  return rng() < 0.9 && !s.endsWith("\r\n\r\n") ? s + "\r\n\r\n" : s;
}

function outcome(read: () => ResponseHead): ResponseHead | string {
  try {
    return read();
  } catch (err) {
    assert.ok(err instanceof Http1Failure, `not an Http1Failure: ${err}`);
    return `refused: ${err.message}`;
  }
}

Deno.test(`http1 head (seed ${seed}): read in place as the plain line-by-line reading reads it, both rule sets`, () => {
  const rng = mulberry32(seed);
  const seen = { read: 0, refused: 0 };
  for (let i = 0; i < rounds; i++) {
    const bytes = latin1(mutate(rng, SEEDS[i % SEEDS.length]!));
    // Also from inside a larger buffer at an odd offset, as the client's read buffer holds it.
    const at = Math.floor(rng() * 5);
    const buf = new Uint8Array(at + bytes.length + 3);
    buf.set(bytes, at);
    const view = buf.subarray(at, at + bytes.length);
    for (const rules of ["strict", "lenient"] as const) {
      const want = outcome(() => referenceHead(bytes, rules));
      assert.deepEqual(
        outcome(() => parseHead(view, rules)),
        want,
        `HEAD_FUZZ_SEED=${seed} case ${i} ${rules}: ${
          JSON.stringify(new TextDecoder("latin1").decode(bytes))
        }`,
      );
      seen[typeof want === "string" ? "refused" : "read"]++;
    }
  }
  // The mutations reach both sides of the rules.
  assert.ok(seen.read > rounds / 4 && seen.refused > rounds / 4, JSON.stringify(seen));
});

Deno.test("http1 head: a byte past ASCII anywhere, at every alignment, is read as the plain reading reads it", () => {
  // The ASCII check goes four bytes at a time where they are aligned: a byte before, inside or after that run.
  for (const head of [SEEDS[0]!, "HTTP/1.1 200 OK", "HTTP/1.1 200 OK\r\nX: y\r\n\r\n"]) {
    for (let at = 0; at < 4; at++) {
      for (let i = 0; i < head.length; i++) {
        const buf = new Uint8Array(at + head.length);
        buf.set(latin1(head), at);
        buf[at + i] = 0xe9;
        const bytes = buf.subarray(at);
        for (const rules of ["strict", "lenient"] as const) {
          assert.deepEqual(
            outcome(() => parseHead(bytes, rules)),
            outcome(() => referenceHead(bytes, rules)),
          );
        }
      }
    }
  }
});

Deno.test(`http1 head (seed ${seed}): its end is where a byte-by-byte scan finds it`, () => {
  const rng = mulberry32(seed ^ 0x5a5a);
  const scan = (buf: Uint8Array, from: number, to: number) => {
    for (let i = from + 3; i < to; i++) {
      if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
    }
    return -1;
  };
  const parts = [[13], [10], [13, 10], [13, 10, 13, 10], [65], [32]];
  let found = 0;
  for (let i = 0; i < rounds; i++) {
    const bytes: number[] = [];
    for (let n = Math.floor(rng() * 24); n > 0; n--) bytes.push(...parts[Math.floor(rng() * parts.length)]!);
    const buf = Uint8Array.from(bytes);
    const from = Math.floor(rng() * (buf.length + 1));
    const to = from + Math.floor(rng() * (buf.length - from + 1));
    const want = scan(buf, from, to);
    assert.equal(headEnd(buf, from, to), want, `HEAD_FUZZ_SEED=${seed} case ${i}: ${bytes} [${from}, ${to})`);
    if (want >= 0) found++;
  }
  assert.ok(found > rounds / 10, `ends found: ${found}`);
});
