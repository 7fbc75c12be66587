/**
 * The upstream HTTP clients against an adversarial upstream (adversarial_upstream.ts): misbehaviours of framing
 * and connection reuse, each played to both clients the gateway can use (src/upstream/http_client.ts:
 * UPSTREAM_CLIENT=wire and fetch). Every request carries a nonce its answer echoes; the invariant, for every
 * answer a client hands back, is that it is its own request's (an error is allowed, a hang is not). Each case
 * also states which outcomes are acceptable for the misbehaving exchange (`x…` requests) and for the requests
 * after it (`n…`, sent sequentially and concurrently so that connections are reused), and wire must be at least
 * as strict as fetch: an answer malformed in a way fetch refuses is refused by wire too.
 *
 * RFC 9112 §9.2: data received on a connection with no request outstanding is never a response, and the
 * connection should be closed — the rule the stray answers below test. A stray always carries the nonce of the
 * request it followed, so a client that hands it to the next request hands one request's answer to another.
 */
import assert from "node:assert/strict";
import { upstreamHttp } from "../../src/upstream/http_client.ts";
import { post, withGateway } from "../support/harness.ts";
import { usageRows } from "../support/usage_rows.ts";
import {
  adversarialUpstream,
  bodyOf,
  chunkedAnswer,
  chunks,
  clAnswer,
  enc,
  type Exchange,
  exchange,
  headOf,
  newNonce,
  NONCE,
  type Outcome,
  type RequestOptions,
  type Result,
  type Script,
  sleep,
} from "../support/adversarial_upstream.ts";

type Kind = "wire" | "fetch";
/** A request (its label), a pause (ms), or requests sent together. */
type Step = string | number | string[];

interface Case {
  name: string;
  /** How the upstream answers requests labelled `x…` (the misbehaviour). */
  x: Script;
  /** How it answers every other request (default: a well-framed Content-Length answer). */
  n?: Script;
  /** The scripts see each request before its body is read (early answers). */
  early?: boolean;
  plan?: Step[];
  /** Options of the `x…` requests (a planned abort, a cancelled body, a large body). */
  xOpts?: Partial<RequestOptions>;
  /** Acceptable outcomes of the `x…` requests, and of the others (default: ok or error). */
  acceptX: Outcome[];
  acceptN?: Outcome[];
  /** The `x…` answer breaks RFC 9112 framing or syntax: where fetch refuses it, wire must refuse it too. */
  malformed?: boolean;
}

const OK: Outcome[] = ["ok"];
const ERROR: Outcome[] = ["error"];
const OK_OR_ERROR: Outcome[] = ["ok", "error"];

/** x1, then requests that may reuse its connection; then x's side by side, then requests reusing those. */
const REUSE_PLAN: Step[] = ["x1", 250, "n1", "n2", ["x2", "x3", "n3"], 250, ["n4", "n5", "n6"], "n7"];
/** The next request comes while the upstream is still about to close (reset or half-close races). */
const QUICK_PLAN: Step[] = ["x1", 30, "n1", 250, "n2", ["x2", "x3", "n3"], 30, ["n4", "n5", "n6"], 250, "n7"];

const good: Script = (x) => x.write(clAnswer(x.nonce));
/** The stray every case below writes: the answer to the request it follows, once more. */
const stray = (x: Exchange) => clAnswer(x.nonce, { tag: "stray" });
/** Writes `bytes`, then closes after `ms` (a client waiting for more gets EOF, never a hang). */
const thenClose = (bytes: string, ms = 300): Script => async (x) => {
  await x.write(bytes);
  await sleep(ms);
  x.close();
};
/** Writes `first`, and `later` after `ms` on the same connection. */
const twoWrites =
  (first: (x: Exchange) => string, ms: number, later: (x: Exchange) => string): Script => async (x) => {
    await x.write(first(x));
    if (ms > 0) await sleep(ms);
    await x.write(later(x));
  };
/** A Content-Length answer whose head carries `lines` instead of the usual length. */
const withLines = (x: Exchange, lines: string[], status?: string) =>
  headOf(x.nonce, lines, status) + bodyOf(x.nonce);
const bodyLength = (x: Exchange) => enc.encode(bodyOf(x.nonce)).length;
/** A JSON body of `size` bytes naming `nonce`. */
const padded = (nonce: string, size: number) => {
  const base = `{"nonce":"${nonce}","pad":""}`;
  return base.replace('"pad":""', `"pad":"${"p".repeat(size - base.length)}"`);
};
/** A Content-Length answer of exactly `total` bytes, head included. */
function sizedAnswer(nonce: string, total: number): string {
  const head = (n: number) => headOf(nonce, [`content-length: ${n}`]);
  let size = total - head(total).length;
  size += total - head(size).length - size; // the length's own digits
  const answer = head(size) + padded(nonce, size);
  if (answer.length !== total) throw new Error(`sized answer of ${answer.length} bytes, not ${total}`);
  return answer;
}

const CASES: Case[] = [
  // Well-formed answers: both clients must answer every request (a client that fails everything fails here).
  { name: "control: Content-Length, keep-alive", x: good, acceptX: OK, acceptN: OK },
  {
    name: "control: chunked, each chunk its own write",
    x: async (x) => {
      await x.write(headOf(x.nonce, ["transfer-encoding: chunked"]));
      for (const piece of chunks(bodyOf(x.nonce), 4).split(/(?<=\r\n)(?=[0-9a-f]+\r\n)/)) {
        await sleep(3);
        await x.write(piece);
      }
    },
    n: (x) => x.write(chunkedAnswer(x.nonce)),
    acceptX: OK,
    acceptN: OK,
  },
  {
    name: "control: head and body in 9-byte writes",
    x: async (x) => {
      const all = enc.encode(clAnswer(x.nonce));
      for (let at = 0; at < all.length; at += 9) {
        await x.write(all.subarray(at, at + 9));
        await sleep(1);
      }
    },
    acceptX: OK,
    acceptN: OK,
  },
  {
    name: "control: Connection: close, then the upstream closes",
    x: async (x) => {
      await x.write(clAnswer(x.nonce, { lines: ["connection: close"] }));
      x.close();
    },
    acceptX: OK,
    acceptN: OK,
  },
  {
    // RFC 9110 §15.2: a client must parse 1xx answers before the final one, even unasked.
    name: "control: 100 Continue, then 200",
    x: (x) => x.write("HTTP/1.1 100 Continue\r\n\r\n" + clAnswer(x.nonce)),
    acceptX: OK,
    acceptN: OK,
  },
  {
    name: "control: 100, 102 and 103 with fields (separate writes), then 200",
    x: async (x) => {
      await x.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n");
      await sleep(5);
      await x.write("HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n");
      await sleep(5);
      await x.write(clAnswer(x.nonce));
    },
    acceptX: OK,
    acceptN: OK,
  },
  {
    // RFC 9112 §7.1.1: unrecognized chunk extensions are ignored.
    name: "control: chunk extensions",
    x: (x) =>
      x.write(
        headOf(x.nonce, ["transfer-encoding: chunked"]) +
          chunks(bodyOf(x.nonce), 2).replace(/^([0-9a-f]+)\r\n/gm, '$1;ext=1;q="a b"\r\n'),
      ),
    acceptX: OK,
    acceptN: OK,
  },
  {
    // RFC 9112 §7.1.2: a trailer section after the last chunk.
    name: "control: trailer fields after the last chunk",
    x: (x) =>
      x.write(
        headOf(x.nonce, ["transfer-encoding: chunked", "trailer: x-sum"]) +
          chunks(bodyOf(x.nonce), 2, "0\r\nx-sum: 1\r\nx-more: 2\r\n\r\n"),
      ),
    acceptX: OK,
    acceptN: OK,
  },
  {
    // RFC 9112 §6.3 rule 8: no length on a response: the body ends when the connection does.
    name: "control: no length on a keep-alive answer (read to EOF)",
    x: (x) => thenClose(headOf(x.nonce) + bodyOf(x.nonce), 100)(x),
    acceptX: OK,
    acceptN: OK,
  },
  {
    name: "control: HTTP/1.0 answer, then the upstream closes",
    x: async (x) => {
      await x.write(clAnswer(x.nonce).replace("HTTP/1.1", "HTTP/1.0"));
      x.close();
    },
    acceptX: OK,
    acceptN: OK,
  },
  {
    // RFC 9112 §9.3 (HTTP/1.0 keep-alive): the connection persists.
    name: "control: HTTP/1.0 with Connection: keep-alive",
    x: (x) =>
      x.write(clAnswer(x.nonce, { lines: ["connection: keep-alive"] }).replace("HTTP/1.1", "HTTP/1.0")),
    acceptX: OK,
    acceptN: OK,
  },

  // Bytes on a connection with no request outstanding (RFC 9112 §9.2).
  {
    name: "stray answer on the idle connection at once",
    x: twoWrites((x) => clAnswer(x.nonce), 0, stray),
    acceptX: OK,
  },
  {
    name: "stray answer on the idle connection after 50 ms",
    x: twoWrites((x) => clAnswer(x.nonce), 50, stray),
    acceptX: OK,
  },
  {
    name: "stray answer on the idle connection after 150 ms",
    x: twoWrites((x) => clAnswer(x.nonce), 150, stray),
    acceptX: OK,
  },
  {
    name: "excess beyond Content-Length in the same write (a whole answer)",
    x: (x) => x.write(clAnswer(x.nonce) + stray(x)),
    acceptX: OK,
  },
  {
    name: "excess beyond Content-Length arriving 80 ms later (a whole answer)",
    x: twoWrites((x) => clAnswer(x.nonce), 80, stray),
    acceptX: OK,
  },
  {
    name: "excess beyond Content-Length: half an answer in the same write, the rest 80 ms later",
    x: twoWrites((x) => clAnswer(x.nonce) + stray(x).slice(0, 40), 80, (x) => stray(x).slice(40)),
    acceptX: OK,
  },
  {
    // The answer ends exactly where the client's first read (2 KiB) or a full read (16 KiB) may end.
    name: "excess in the same write after an answer of exactly 2048 bytes",
    x: (x) => x.write(sizedAnswer(x.nonce, 2048) + stray(x)),
    acceptX: OK,
  },
  {
    name: "excess in the same write after an answer of exactly 16384 bytes",
    x: (x) => x.write(sizedAnswer(x.nonce, 16384) + stray(x)),
    acceptX: OK,
  },
  {
    name: "excess in the same write after a 100 KB chunked answer",
    x: (x) =>
      x.write(
        headOf(x.nonce, ["transfer-encoding: chunked"]) + chunks(padded(x.nonce, 100_000), 7) + stray(x),
      ),
    acceptX: OK,
  },
  {
    name: "junk (not an answer) beyond Content-Length",
    x: (x) => x.write(clAnswer(x.nonce) + "garbage\r\n\r\n"),
    acceptX: OK,
  },
  {
    name: "three answers to one request in one write (pipelined duplicates)",
    x: (x) => x.write(clAnswer(x.nonce) + stray(x) + stray(x)),
    acceptX: OK,
  },
  {
    // The upstream answered once too often: a client that reads the duplicate as the next request's answer
    // answers every later request on that connection with the previous one's.
    name: "desynchronised: one answer written twice (60 ms apart), later requests answered in order",
    x: twoWrites((x) => clAnswer(x.nonce), 60, stray),
    plan: ["x1", 150, "n1", "n2", "n3", "n4", ["x2", "x3"], 150, ["n5", "n6"], "n7", "n8"],
    acceptX: OK,
  },
  {
    name: "stray answer 150 ms after a chunked answer",
    x: twoWrites((x) => chunkedAnswer(x.nonce), 150, stray),
    n: (x) => x.write(chunkedAnswer(x.nonce)),
    acceptX: OK,
  },
  {
    name: "a whole answer after the last chunk, same write",
    x: (x) => x.write(chunkedAnswer(x.nonce) + stray(x)),
    acceptX: OK,
  },
  {
    name: "junk after the last chunk",
    x: (x) => x.write(chunkedAnswer(x.nonce) + "0\r\n\r\ngarbage"),
    acceptX: OK,
  },
  {
    // RFC 9112 §6.3 rule 1: a 204 ends with its head; what follows is not its body.
    name: "204 followed by an answer in the same write",
    x: (x) => x.write(headOf(x.nonce, [], "204 No Content") + stray(x)),
    acceptX: OK_OR_ERROR,
  },
  {
    // RFC 9112 §9.3: an HTTP/1.0 answer without keep-alive ends the connection's use.
    name: "HTTP/1.0 answer, the upstream keeps the connection and writes a stray 100 ms later",
    x: twoWrites((x) => clAnswer(x.nonce).replace("HTTP/1.1", "HTTP/1.0"), 100, stray),
    acceptX: OK,
  },
  {
    // RFC 9112 §9.6: after Connection: close the client sends nothing more on the connection.
    name: "Connection: close answer, the upstream keeps the connection and writes a stray 100 ms later",
    x: twoWrites((x) => clAnswer(x.nonce, { lines: ["connection: close"] }), 100, stray),
    acceptX: OK,
  },
  {
    name: "reset (RST) 120 ms after the answer, the next request racing it",
    x: async (x) => {
      await x.write(clAnswer(x.nonce));
      await sleep(120);
      x.close(); // the next request's bytes unread: the kernel resets
    },
    plan: QUICK_PLAN,
    acceptX: OK,
  },
  {
    name: "half-close (FIN) right after the answer, the next request racing it",
    x: async (x) => {
      await x.write(clAnswer(x.nonce));
      await x.closeWrite();
      await sleep(100);
      x.close();
    },
    plan: QUICK_PLAN,
    acceptX: OK,
  },
  {
    // The client gives up at 80 ms; the answer comes at 200 ms on the same connection, if it is still open.
    name: "late answer to a cancelled request, then the next request",
    x: async (x) => {
      await sleep(200);
      await x.write(clAnswer(x.nonce, { tag: "late" }));
    },
    xOpts: { abortAfterMs: 80 },
    plan: ["x1", 300, "n1", "n2", ["x2", "x3", "n3"], 300, ["n4", "n5", "n6"], "n7"],
    acceptX: ERROR,
  },
  {
    // The client cancels the body after the head; its rest comes 30 ms later (a clean end), a stray after.
    name: "cancelled body: its rest 30 ms later, then a stray 150 ms later",
    x: async (x) => {
      const body = bodyOf(x.nonce).padEnd(300, " ");
      await x.write(headOf(x.nonce, ["content-length: 300"]) + body.slice(0, 40));
      await sleep(30);
      await x.write(body.slice(40));
      await sleep(150);
      await x.write(stray(x));
    },
    xOpts: { cancelBody: true },
    acceptX: OK,
  },
  {
    name: "cancelled body: its rest 30 ms later with a whole answer after it",
    x: async (x) => {
      const body = bodyOf(x.nonce).padEnd(300, " ");
      await x.write(headOf(x.nonce, ["content-length: 300"]) + body.slice(0, 40));
      await sleep(30);
      await x.write(body.slice(40) + stray(x));
    },
    xOpts: { cancelBody: true },
    acceptX: OK,
  },

  // Early answers (RFC 9112 §9.5: a client sending a body should watch for an answer meanwhile).
  {
    name: "early answer before the request body is read, the body read after",
    early: true,
    x: async (x) => {
      await x.write(clAnswer(x.nonce));
      await x.readBody();
    },
    xOpts: { bodyBytes: 256 * 1024 },
    acceptX: OK_OR_ERROR,
  },
  {
    name: "early answer, then the connection closed with the request body unread (reset)",
    early: true,
    x: async (x) => {
      await x.write(clAnswer(x.nonce));
      x.close();
    },
    xOpts: { bodyBytes: 256 * 1024 },
    acceptX: OK_OR_ERROR,
  },
  {
    name: "early 413 with Connection: close, body unread",
    early: true,
    x: async (x) => {
      await x.write(clAnswer(x.nonce, { status: "413 Content Too Large", lines: ["connection: close"] }));
      await sleep(20);
      x.close();
    },
    xOpts: { bodyBytes: 256 * 1024 },
    acceptX: OK_OR_ERROR,
  },

  // Incomplete answers (RFC 9112 §8: recorded as incomplete, never as whole).
  { name: "EOF before any answer byte", x: (x) => Promise.resolve(x.close()), acceptX: ERROR },
  { name: "EOF in the middle of the head", x: thenClose("HTTP/1.1 200 OK\r\ncontent-le", 0), acceptX: ERROR },
  {
    name: "EOF in the middle of a Content-Length body",
    x: async (x) => {
      await x.write(headOf(x.nonce, ["content-length: 100"]) + bodyOf(x.nonce).slice(0, 20));
      x.close();
    },
    acceptX: ERROR,
  },
  {
    name: "EOF in the middle of a chunk",
    x: async (x) => {
      await x.write(
        headOf(x.nonce, ["transfer-encoding: chunked"]) + "64\r\n" + bodyOf(x.nonce).slice(0, 20),
      );
      x.close();
    },
    acceptX: ERROR,
  },
  {
    name: "EOF without the last chunk",
    x: async (x) => {
      await x.write(headOf(x.nonce, ["transfer-encoding: chunked"]) + chunks(bodyOf(x.nonce), 2, ""));
      x.close();
    },
    acceptX: ERROR,
  },
  {
    name: "EOF after 100 Continue",
    x: async (x) => {
      await x.write("HTTP/1.1 100 Continue\r\n\r\n");
      await sleep(10);
      x.close();
    },
    acceptX: ERROR,
  },
  {
    name: "reset in the middle of the body (request body unread)",
    early: true,
    x: async (x) => {
      await x.write(headOf(x.nonce, ["content-length: 100"]) + bodyOf(x.nonce).slice(0, 20));
      await sleep(10);
      x.close();
    },
    xOpts: { bodyBytes: 256 * 1024 },
    acceptX: ERROR,
  },

  // Content-Length (RFC 9112 §6.3 rule 5, RFC 9110 §8.6).
  {
    name: "two different Content-Length fields",
    x: (x) => thenClose(withLines(x, [`content-length: ${bodyLength(x)}`, "content-length: 5"]))(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    // RFC 9110 §8.6: the same value repeated in a list may be read as that value or refused.
    name: "Content-Length: n, n",
    x: (x) => thenClose(withLines(x, [`content-length: ${bodyLength(x)}, ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
  },
  {
    name: "the same Content-Length field twice",
    x: (x) =>
      thenClose(withLines(x, [`content-length: ${bodyLength(x)}`, `content-length: ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
  },
  {
    name: "Content-Length: -1",
    x: (x) => thenClose(withLines(x, ["content-length: -1"]))(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    name: "Content-Length: abc",
    x: (x) => thenClose(withLines(x, ["content-length: abc"]))(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    name: "Content-Length with a plus sign",
    x: (x) => thenClose(withLines(x, [`content-length: +${bodyLength(x)}`]))(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    name: "Content-Length of 21 digits",
    x: (x) => thenClose(withLines(x, ["content-length: 100000000000000000000"]))(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    // RFC 9112 §6.3 rule 3: Transfer-Encoding overrides Content-Length; such a message "ought to be handled as
    // an error", and the connection must not carry another request (RFC 9112 §6.1).
    name: "Content-Length with Transfer-Encoding: chunked, a stray 100 ms later",
    x: twoWrites(
      (x) => headOf(x.nonce, ["content-length: 5", "transfer-encoding: chunked"]) + chunks(bodyOf(x.nonce)),
      100,
      stray,
    ),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // The smuggling shape: the Content-Length spans the chunked body and another answer behind it.
    name: "Transfer-Encoding: chunked with a Content-Length that spans a smuggled answer",
    x: (x) => {
      const tail = chunks(bodyOf(x.nonce)) + stray(x);
      return x.write(
        headOf(x.nonce, ["transfer-encoding: chunked", `content-length: ${enc.encode(tail).length}`]) + tail,
      );
    },
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message is faulty framing; close after it.
    name: "HTTP/1.0 answer with Transfer-Encoding: chunked, a stray 100 ms later",
    x: twoWrites((x) => chunkedAnswer(x.nonce).replace("HTTP/1.1", "HTTP/1.0"), 100, stray),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    name: "Transfer-Encoding: gzip, chunked (a coding the client cannot undo)",
    x: (x) => thenClose(headOf(x.nonce, ["transfer-encoding: gzip, chunked"]) + chunks(bodyOf(x.nonce)))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },

  // Chunked coding (RFC 9112 §7.1).
  {
    name: "chunk size of 21 hex digits",
    x: (x) => thenClose(headOf(x.nonce, ["transfer-encoding: chunked"]) + "100000000000000000000\r\nabc")(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    name: "chunk size that is not hex",
    x: (x) => thenClose(headOf(x.nonce, ["transfer-encoding: chunked"]) + "zz\r\nabc\r\n0\r\n\r\n")(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    name: "negative chunk size",
    x: (x) => thenClose(headOf(x.nonce, ["transfer-encoding: chunked"]) + "-5\r\nabcde\r\n0\r\n\r\n")(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    name: "chunk data not followed by CRLF",
    x: (x) => thenClose(headOf(x.nonce, ["transfer-encoding: chunked"]) + `3\r\nabcXY0\r\n\r\n`)(x),
    acceptX: ERROR,
    malformed: true,
  },

  // The head (RFC 9112 §2.2, §4, §5).
  {
    name: "head over 64 KiB (one 80 KB field)",
    x: (x) =>
      thenClose(withLines(x, [`x-big: ${"a".repeat(80_000)}`, `content-length: ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
  },
  {
    name: "head of 1 MiB (one field)",
    x: (x) =>
      thenClose(withLines(x, [`x-big: ${"a".repeat(1 << 20)}`, `content-length: ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
  },
  {
    // RFC 9112 §2.2: a recipient MAY take a bare LF for a line end. The upstream closes 300 ms later.
    name: "bare LF line ends",
    x: (x) => thenClose(clAnswer(x.nonce).replaceAll("\r\n", "\n"))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // RFC 9112 §5.2: a gateway may refuse obs-fold (502) or replace it with SP.
    name: "obs-fold header line",
    x: (x) => thenClose(withLines(x, ["x-folded: a", " b", `content-length: ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // RFC 9112 §5.1: no whitespace between a field name and its colon.
    name: "whitespace before the colon of Content-Length",
    x: (x) => thenClose(withLines(x, [`content-length : ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    name: "header line without a colon",
    x: (x) => thenClose(withLines(x, ["no colon here", `content-length: ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // RFC 9110 §5.5: NUL in a field value: reject, or replace it with SP.
    name: "NUL in a header value",
    x: (x) => thenClose(withLines(x, ["x-nul: a\0b", `content-length: ${bodyLength(x)}`]))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // RFC 9110 §15: codes outside 100–599 are invalid; a client should treat them as 5xx (or refuse them).
    name: "status 600",
    x: (x) => thenClose(clAnswer(x.nonce, { status: "600 Beyond" }))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    name: "status 099 (not a 1xx)",
    x: (x) => thenClose(clAnswer(x.nonce, { status: "099 Below" }))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    // RFC 9110 §7.8: no switch unless the request asked with Upgrade, and what follows a 101 is not HTTP/1.1:
    // never read as this request's answer. Handing the 101 itself back (fetch does) is the request's own answer.
    name: "101 Switching Protocols to a POST without Upgrade, an answer after it",
    x: (x) => thenClose(headOf(x.nonce, ["upgrade: h2c"], "101 Switching Protocols") + clAnswer(x.nonce))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
  {
    name: "HTTP/2.0 status line",
    x: (x) => thenClose(clAnswer(x.nonce).replace("HTTP/1.1", "HTTP/2.0"))(x),
    acceptX: ERROR,
    malformed: true,
  },
  {
    // RFC 9112 §4: the SP after the status code is required; many readers take its absence.
    name: "status line without a reason phrase or its space",
    x: (x) => thenClose(clAnswer(x.nonce, { status: "200" }))(x),
    acceptX: OK_OR_ERROR,
    malformed: true,
  },
];

interface CaseRun {
  name: string;
  results: Map<string, Result>;
  violations: string[];
}

function labels(plan: Step[]): string[] {
  return plan.flatMap((s) => typeof s === "number" ? [] : Array.isArray(s) ? s : [s]);
}

async function runCase(kind: Kind, c: Case): Promise<CaseRun> {
  const up = adversarialUpstream((x) => (x.label.startsWith("x") ? c.x : c.n ?? good)(x), { early: c.early });
  const http = upstreamHttp(kind, () => undefined);
  const results = new Map<string, Result>();
  const send = async (label: string) => {
    const opts = label.startsWith("x") ? c.xOpts : undefined;
    results.set(label, await exchange(http.fetch, up.url, { ...opts, label }));
  };
  try {
    for (const step of c.plan ?? REUSE_PLAN) {
      if (typeof step === "number") await sleep(step);
      else if (Array.isArray(step)) await Promise.all(step.map(send));
      else await send(step);
    }
  } finally {
    http.close();
    await up.close();
  }
  const violations: string[] = [];
  for (const label of labels(c.plan ?? REUSE_PLAN)) {
    const r = results.get(label)!;
    const accept = label.startsWith("x") ? c.acceptX : c.acceptN ?? OK_OR_ERROR;
    if (!accept.includes(r.outcome)) {
      violations.push(
        `${kind} · ${c.name} · ${label}: ${r.outcome} (accepts ${accept.join("|")}): ${r.detail}`,
      );
    }
  }
  return { name: c.name, results, violations };
}

/** Every case under one client, all at once (each on its own upstream and client). */
async function runAll(kind: Kind): Promise<CaseRun[]> {
  return await Promise.all(CASES.map((c) => runCase(kind, c)));
}

const runs = new Map<Kind, Promise<CaseRun[]>>();
const runsOf = (kind: Kind) => {
  if (!runs.has(kind)) runs.set(kind, runAll(kind));
  return runs.get(kind)!;
};

const summary = (run: CaseRun) =>
  [...run.results].map(([label, r]) => `${label}=${r.outcome}${r.status ? `(${r.status})` : ""}`).join(" ");

Deno.test("adversarial upstream: at least 40 cases, controls included", () => {
  assert.ok(CASES.length >= 40, `${CASES.length} cases`);
  assert.equal(new Set(CASES.map((c) => c.name)).size, CASES.length, "names are unique");
  assert.ok(CASES.filter((c) => c.name.startsWith("control:")).length >= 5);
});

for (const kind of ["fetch", "wire"] as const) {
  Deno.test(`adversarial upstream (UPSTREAM_CLIENT=${kind}): every answer handed back is its own request's`, async () => {
    const all = await runsOf(kind);
    if (Deno.env.get("ADVERSARIAL_TABLE")) {
      for (const r of all) console.log(`${kind} · ${r.name}: ${summary(r)}`);
    }
    const violations = all.flatMap((r) => r.violations);
    assert.deepEqual(violations, [], `${violations.length} violations:\n${violations.join("\n")}`);
  });
}

Deno.test("adversarial upstream: wire is at least as strict as fetch", async () => {
  const [fetchRuns, wireRuns] = [await runsOf("fetch"), await runsOf("wire")];
  const looser: string[] = [];
  const differ: string[] = [];
  CASES.forEach((c, i) => {
    const f = fetchRuns[i]!, w = wireRuns[i]!;
    for (const [label, fr] of f.results) {
      const wr = w.results.get(label)!;
      if (fr.outcome !== wr.outcome) {
        differ.push(`${c.name} · ${label}: fetch ${fr.outcome}, wire ${wr.outcome}`);
      }
      // Where fetch refused, wire hands back no other request's answer (and does not hang); and a malformed
      // answer fetch refused, wire refuses too.
      const wireLooser = wr.outcome === "foreign" || wr.outcome === "hang" ||
        (c.malformed === true && label.startsWith("x") && wr.outcome === "ok");
      if (fr.outcome === "error" && wireLooser) {
        looser.push(
          `${c.name} · ${label}: fetch ${fr.outcome} (${fr.detail}), wire ${wr.outcome} (${wr.detail})`,
        );
      }
    }
  });
  if (Deno.env.get("ADVERSARIAL_TABLE")) console.log(`fetch and wire differ:\n${differ.join("\n")}`);
  assert.deepEqual(looser, [], `wire looser than fetch:\n${looser.join("\n")}`);
});

/**
 * Through the whole gateway (the reported cases): key A's chat request is answered normally, then the alpha
 * upstream writes A's answer once more on the idle connection (150 ms later; or as excess beyond Content-Length
 * arriving 80 ms later). Key B's next request must get its own text and be charged for its own usage.
 */
function chatAnswer(nonce: string, usage: { prompt: number; completion: number }): string {
  const body = JSON.stringify({
    id: "chatcmpl-adv",
    object: "chat.completion",
    created: 1,
    model: "k3",
    choices: [{
      index: 0,
      message: { role: "assistant", content: `answer for ${nonce}` },
      finish_reason: "stop",
    }],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  });
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-echo: ${nonce}\r\n` +
    `content-length: ${enc.encode(body).length}\r\n\r\n${body}`;
}

const USAGE_A = { prompt: 1000, completion: 2000 };
const USAGE_B = { prompt: 7, completion: 3 };

for (const kind of ["wire", "fetch"] as const) {
  for (const delay of [150, 80]) {
    Deno.test(`gateway (UPSTREAM_CLIENT=${kind}): A's answer again ${delay} ms after it never reaches key B`, async () => {
      const nonceA = newNonce();
      const up = adversarialUpstream(async (x) => {
        const nonce = x.body.match(NONCE)?.[0] ?? "nonce-000000000000";
        const answer = chatAnswer(nonce, nonce === nonceA ? USAGE_A : USAGE_B);
        await x.write(answer);
        if (nonce !== nonceA) return;
        await sleep(delay);
        await x.write(answer); // A's answer again, on the idle connection
      });
      try {
        await withGateway(async (t) => {
          const a = await t.newKey("10.00");
          const b = await t.newKey("10.00");
          const ask = (key: string, nonce: string) =>
            post(t.url + "/v1/chat/completions", key, {
              model: "k3",
              max_tokens: 50,
              messages: [{ role: "user", content: `say ${nonce}` }],
            });
          const resA = await ask(a.key, nonceA);
          assert.equal(resA.status, 200);
          assert.equal((await resA.json()).choices[0].message.content, `answer for ${nonceA}`);
          await up.settled(); // the stray is on the wire
          await sleep(100);
          const nonceB = newNonce();
          const resB = await ask(b.key, nonceB);
          const json = await resB.json();
          assert.equal(resB.status, 200, JSON.stringify(json));
          const got = json.choices[0].message.content;
          assert.equal(got, `answer for ${nonceB}`, `key B gets its own text, not ${got} (A: ${nonceA})`);
          assert.deepEqual(
            [json.usage.prompt_tokens, json.usage.completion_tokens],
            [USAGE_B.prompt, USAGE_B.completion],
          );
          const [rowA] = await usageRows(t, a.key);
          const rowsB = await usageRows(t, b.key);
          assert.equal(rowsB.length, 1);
          assert.deepEqual([rowA!.input_tokens, rowA!.output_tokens], [USAGE_A.prompt, USAGE_A.completion]);
          assert.deepEqual(
            [rowsB[0]!.input_tokens, rowsB[0]!.output_tokens],
            [USAGE_B.prompt, USAGE_B.completion],
            "key B is charged for its own usage",
          );
          const keyB = (await t.admin("GET", `/admin/keys/${b.id}`)).json;
          assert.equal(keyB.spent_usd, rowsB[0]!.charged_usd);
        }, { ALPHA_UPSTREAM_URL: up.url, UPSTREAM_CLIENT: kind });
      } finally {
        await up.close();
      }
    });
  }
}
