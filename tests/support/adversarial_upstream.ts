/**
 * A raw HTTP/1.1 upstream on loopback that plays scripted misbehaviours of framing and connection reuse
 * (upstream_adversarial_test.ts, upstream_fuzz_test.ts, the gateway cases). Every request names its nonce in
 * its target (`/t/<label>/<nonce>`); a well-behaved answer echoes it in an `x-echo` header and in its JSON body,
 * so a test can tell whose answer a client handed back. Also the client side: one request through an
 * UpstreamFetch, classified as its own answer, an error, another request's answer, or a hang.
 */
import type { UpstreamFetch } from "../../src/upstream/wire_client.ts";

export const enc = new TextEncoder();
export const dec = new TextDecoder();

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `nonce-` and 12 hex digits: what the outcome check looks for in heads and bodies. */
export const NONCE = /nonce-[0-9a-f]{12}/g;

let nonceCounter = 0;
/** A nonce no other request of this process has. */
export function newNonce(): string {
  const random = crypto.getRandomValues(new Uint8Array(3));
  const hex = [...random].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `nonce-${hex}${(++nonceCounter).toString(16).padStart(6, "0")}`;
}

/** The JSON body of the answer to `nonce` (`tag` tells a stray from an answer in failure output). */
export const bodyOf = (nonce: string, tag = "answer") => `{"nonce":"${nonce}","tag":"${tag}"}`;

/** A head echoing `nonce`, with the given extra lines (each without its CRLF). */
export function headOf(nonce: string, lines: string[] = [], status = "200 OK", version = "HTTP/1.1"): string {
  return `${version} ${status}\r\nx-echo: ${nonce}\r\ncontent-type: application/json\r\n` +
    lines.map((l) => l + "\r\n").join("") + "\r\n";
}

/** A well-framed Content-Length answer to `nonce`. */
export function clAnswer(nonce: string, opts: { tag?: string; lines?: string[]; status?: string } = {}) {
  const body = bodyOf(nonce, opts.tag);
  return headOf(nonce, [...(opts.lines ?? []), `content-length: ${enc.encode(body).length}`], opts.status) +
    body;
}

/** Chunked coding of `data` in `pieces` chunks, with the last chunk and an empty trailer section. */
export function chunks(data: string, pieces = 3, terminator = "0\r\n\r\n"): string {
  const bytes = enc.encode(data);
  const size = Math.ceil(bytes.length / pieces);
  let out = "";
  for (let at = 0; at < bytes.length; at += size) {
    const part = dec.decode(bytes.subarray(at, at + size));
    out += `${enc.encode(part).length.toString(16)}\r\n${part}\r\n`;
  }
  return out + terminator;
}

/** A well-framed chunked answer to `nonce`. */
export function chunkedAnswer(nonce: string, opts: { tag?: string; lines?: string[]; pieces?: number } = {}) {
  return headOf(nonce, [...(opts.lines ?? []), "transfer-encoding: chunked"]) +
    chunks(bodyOf(nonce, opts.tag), opts.pieces);
}

/** One request as the upstream received it, and what a script may do on its connection. */
export interface Exchange {
  /** The label from the request target (`/t/<label>/<nonce>`): which part of a plan it is. */
  readonly label: string;
  readonly nonce: string;
  /** The connection (1-based, in accept order) and this request's place on it (1-based). */
  readonly conn: number;
  readonly index: number;
  /** The request's body has been read off the connection (scripts marked `early` get it unread). */
  readonly bodyRead: boolean;
  readBody(): Promise<void>;
  /** The request's body once read (empty before). */
  readonly body: string;
  /** Writes all of it; a connection the client already closed is ignored. */
  write(bytes: string | Uint8Array): Promise<void>;
  /** Sends FIN and keeps reading (a half-close). */
  closeWrite(): Promise<void>;
  /** Closes the connection: with request bytes still unread, the kernel answers with a reset (RST). */
  close(): void;
  readonly closed: boolean;
  /** Settles when the connection is over: the client closed it (EOF, reset) or the upstream did. */
  readonly gone: Promise<void>;
}

export type Script = (x: Exchange) => Promise<void>;

export interface UpstreamOptions {
  /** The script runs as soon as the head is read, the body still unread (early answers). */
  early?: boolean;
}

/**
 * A raw HTTP/1.1 upstream on 127.0.0.1: reads each request's head (and its Content-Length body unless `early`)
 * and hands it to `script`, then reads the next request on the connection unless the script closed it.
 */
export function adversarialUpstream(script: Script, opts: UpstreamOptions = {}) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const running = new Set<Promise<void>>();
  let accepts = 0;
  let requests = 0;
  const serve = async (conn: Deno.Conn, id: number) => {
    let buf = new Uint8Array(0);
    let closed = false;
    let over!: () => void;
    const gone = new Promise<void>((r) => over = r);
    const close = () => {
      if (closed) return;
      closed = true;
      over();
      conns.delete(conn);
      try {
        conn.close();
      } catch { /* gone */ }
    };
    const more = async (): Promise<boolean> => {
      if (closed) return false;
      const chunk = new Uint8Array(64 * 1024);
      const n = await conn.read(chunk).catch(() => null);
      if (n === null) return false;
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
      return true;
    };
    for (let index = 1;; index++) {
      let end: number;
      while ((end = headEnd(buf)) < 0) if (!(await more())) return close();
      const head = dec.decode(buf.subarray(0, end));
      buf = buf.slice(end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      const target = /^[A-Z]+ (\S+) HTTP/.exec(head)?.[1] ?? "";
      const m = /^\/t\/([^/]+)\/(nonce-[0-9a-f]{12})/.exec(target);
      let bodyRead = false;
      let body = "";
      const readBody = async () => {
        if (bodyRead) return;
        while (buf.length < length) if (!(await more())) return close();
        body = dec.decode(buf.subarray(0, length));
        buf = buf.slice(length);
        bodyRead = true;
      };
      if (!opts.early) await readBody();
      if (closed) return;
      requests++;
      const x: Exchange = {
        label: m?.[1] ?? "?",
        nonce: m?.[2] ?? "nonce-000000000000",
        conn: id,
        index,
        get bodyRead() {
          return bodyRead;
        },
        readBody,
        get body() {
          return body;
        },
        write: async (s) => {
          const b = typeof s === "string" ? enc.encode(s) : s;
          try {
            for (let off = 0; off < b.length;) off += await conn.write(b.subarray(off));
          } catch { /* the client went away */ }
        },
        closeWrite: async () => {
          try {
            await conn.closeWrite();
          } catch { /* gone */ }
        },
        close,
        get closed() {
          return closed;
        },
        gone,
      };
      const run = script(x).catch(() => {});
      running.add(run);
      await run;
      running.delete(run);
      if (closed) return;
      await readBody();
      if (closed) return;
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      // Every write goes out at once: Nagle's algorithm would hold a stray written after an answer until the
      // client's delayed ACK (≈40 ms), so the stray would arrive later than the script says.
      conn.setNoDelay(true);
      conns.add(conn);
      serve(conn, ++accepts);
    }
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get accepts() {
      return accepts;
    },
    get requests() {
      return requests;
    },
    /** Scripts still running (writing late answers, waiting to close). */
    settled: () => Promise.all([...running]),
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* gone */ }
      }
      conns.clear();
      await accepting;
    },
  };
}

export type Upstream = ReturnType<typeof adversarialUpstream>;

function headEnd(buf: Uint8Array): number {
  for (let i = 3; i < buf.length; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

/**
 * What a client handed back for one request:
 * - `ok`: an answer that is this request's own (its `x-echo` and every nonce in its body are its nonce), body
 *   read to its end (or cancelled on purpose);
 * - `error`: the call rejected or the body failed, and nothing that was handed over named another request;
 * - `foreign`: a head or body bytes that name another request, or an answer naming no request at all;
 * - `hang`: nothing settled within the request's time limit.
 */
export type Outcome = "ok" | "error" | "foreign" | "hang";

export interface Result {
  outcome: Outcome;
  status?: number;
  /** What went wrong or what was received, for the failure report. */
  detail: string;
}

export interface RequestOptions {
  label: string;
  nonce?: string;
  /** Padding in the JSON body (bytes): a large request body. */
  bodyBytes?: number;
  /** Aborts the call after this long (a planned cancel: its error is no hang). */
  abortAfterMs?: number;
  /** Reads the head only, then cancels the body. */
  cancelBody?: boolean;
  /** The whole call is bounded by this (a hang beyond it). */
  limitMs?: number;
}

/** Sends one request through `fetch` to `url` and classifies what came back. */
export async function exchange(fetch: UpstreamFetch, url: string, o: RequestOptions): Promise<Result> {
  const nonce = o.nonce ?? newNonce();
  const ac = new AbortController();
  let hung = false;
  const limit = setTimeout(() => {
    hung = true;
    ac.abort(new Error("test limit: the client hung"));
  }, o.limitMs ?? 4000);
  const cancel = o.abortAfterMs === undefined
    ? undefined
    : setTimeout(() => ac.abort(new Error("planned abort")), o.abortAfterMs);
  const body = JSON.stringify({ nonce, pad: "p".repeat(o.bodyBytes ?? 0) });
  let status: number | undefined;
  let text = "";
  try {
    const res = await fetch(`${url}/t/${o.label}/${nonce}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer up-key" },
      body,
      signal: ac.signal,
    });
    status = res.status;
    // Its nonces, not its exact value: a client may join a repeated or folded field (RFC 9112 §5.2).
    const echo = res.headers.get("x-echo");
    const echoed = echo?.match(NONCE) ?? [];
    if (echoed.length === 0 || echoed.some((n) => n !== nonce)) {
      await res.body?.cancel().catch(() => {});
      return { outcome: "foreign", status, detail: `x-echo ${echo} for ${nonce}` };
    }
    if (o.cancelBody) {
      await res.body?.cancel().catch(() => {});
      return { outcome: "ok", status, detail: "head only" };
    }
    let failure: unknown;
    if (res.body) {
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      try {
        for (let r = await reader.read(); !r.done; r = await reader.read()) {
          text += decoder.decode(r.value, { stream: true });
        }
        text += decoder.decode();
      } catch (err) {
        failure = err;
      }
    }
    const others = [...text.matchAll(NONCE)].map((m) => m[0]).filter((n) => n !== nonce);
    if (others.length > 0) {
      return { outcome: "foreign", status, detail: `body names ${others[0]} for ${nonce}: ${clip(text)}` };
    }
    if (failure !== undefined) {
      return { outcome: hung ? "hang" : "error", status, detail: `body: ${describe(failure)}` };
    }
    return { outcome: "ok", status, detail: clip(text) };
  } catch (err) {
    return { outcome: hung ? "hang" : "error", status, detail: describe(err) };
  } finally {
    clearTimeout(limit);
    if (cancel !== undefined) clearTimeout(cancel);
  }
}

const clip = (s: string) => JSON.stringify(s.length > 160 ? s.slice(0, 160) + "…" : s);

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
