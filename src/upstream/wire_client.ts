/**
 * The upstream calls' HTTP/1.1 client (issue 18): keep-alive connections per origin, each request written in one
 * write, the response framed by http1_framing.ts and handed back as a standard Response (the engine reads it as
 * it read fetch's). Why not Deno's fetch: it costs a proxied JSON request ≈30 µs of CPU more than this client
 * (bench/RESULTS.md "What Deno's fetch costs"), a fifth of the gateway's whole cost per request. Plain http and
 * https (TLS with ALPN http/1.1). `UPSTREAM_CLIENT=fetch`, or an HTTP(S)_PROXY in the environment (which fetch
 * honours and this client does not), keeps fetch (src/upstream/client.ts).
 *
 * Failures read as fetch's do for the retry rule (retry.ts): a connection that cannot be made is an
 * UpstreamConnectError; an abort rejects with the signal's reason, and closes the connection. A connection
 * taken from the pool that the upstream closed meanwhile (its idle timeout racing our request) fails before
 * any answer byte: that one request is sent again on a new connection, as hyper and undici do.
 */
import { deadline, onTick } from "../util/ticker.ts";
import { PlainStream } from "../util/plain_streams.ts";
import {
  ChunkedDecoder,
  headEnd,
  MAX_HEAD_BYTES,
  parseHead,
  type ResponseHead,
  UpstreamProtocolFailure,
} from "./http1_framing.ts";

/** The upstream could not be reached (refused, reset, DNS or TLS failure while connecting): nothing was sent. */
export class UpstreamConnectError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(`upstream connect failed: ${message}`, options);
    this.name = "UpstreamConnectError";
  }
}

export interface WireInit {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  signal: AbortSignal;
}

/** The part of fetch the upstream calls use. */
export type UpstreamFetch = (url: string, init: WireInit) => Promise<Response>;

export interface WireClientOptions {
  /** Idle connections kept per origin (beyond them a finished connection is closed). */
  maxIdlePerOrigin?: number;
  /** An idle connection is closed after this long: below the 5 s keep-alive of common servers (Node's). */
  idleMs?: number;
  /** Extra root certificates (PEM) for https upstreams; tests use their own. */
  caCerts?: string[];
}

type Conn = Deno.TcpConn | Deno.TlsConn;

interface Origin {
  key: string;
  hostname: string;
  port: number;
  tls: boolean;
  /** The Host header. */
  host: string;
}

/** A connection with its read buffer: what the previous read brought past the answer's end stays in it. */
interface Link {
  conn: Conn;
  origin: Origin;
  buf: Uint8Array;
  start: number;
  end: number;
  idleSince: number;
  /** The buffer's size for the next read that starts with it empty (fill). */
  want: number;
}

const MIN_BUFFER = 2048;
/**
 * A body cancelled before its end is read on for at most this long and this many bytes: a reader that stopped
 * at the answer's end (the stream pipeline after its terminal frames) would otherwise close a connection whose
 * last bytes (chunked coding's terminator) were about to arrive, and the next request would pay a connect.
 */
const DRAIN_MS = 200;
const DRAIN_BYTES = 4096;
const MAX_BUFFER = 16 * 1024;
const encoder = new TextEncoder();
/** Header names and values go into the request as they are: no CR, LF or NUL may smuggle a line in. */
const UNSAFE = /[\r\n\0]/;
const USER_AGENT = `Deno/${Deno.version.deno}`;

export class WireClient {
  readonly #idle = new Map<string, Link[]>();
  /** Connections whose cancelled body is being read to its end (DRAIN_MS). */
  readonly #draining = new Set<Conn>();
  readonly #origins = new Map<string, Origin>();
  readonly #maxIdle: number;
  readonly #idleMs: number;
  readonly #caCerts: string[] | undefined;
  #stopSweep: (() => void) | undefined;
  #closed = false;

  constructor(opts: WireClientOptions = {}) {
    this.#maxIdle = opts.maxIdlePerOrigin ?? 256;
    this.#idleMs = opts.idleMs ?? 4000;
    this.#caCerts = opts.caCerts;
  }

  /** Idle connections, all origins (tests). */
  get idleCount(): number {
    let n = 0;
    for (const list of this.#idle.values()) n += list.length;
    return n;
  }

  fetch: UpstreamFetch = async (url, init) => {
    const signal = init.signal;
    signal.throwIfAborted();
    const { origin, target } = this.#target(url);
    const body = typeof init.body === "string" ? encoder.encode(init.body) : init.body;
    const request = requestBytes(init.method, target, origin.host, init.headers, body);
    const reused = this.#take(origin);
    if (reused) {
      try {
        return await this.#exchange(reused, request, signal);
      } catch (err) {
        if (!(err instanceof StaleConnection)) throw err;
      }
    }
    return await this.#exchange(await this.#connect(origin, signal), request, signal);
  };

  /** Closes every idle connection; answers still being read finish on theirs, which are then closed. */
  close(): void {
    this.#closed = true;
    for (const conn of this.#draining) closeQuietly(conn);
    for (const list of this.#idle.values()) for (const l of list) closeQuietly(l.conn);
    this.#idle.clear();
    this.#stopSweep?.();
    this.#stopSweep = undefined;
  }

  #target(url: string): { origin: Origin; target: string } {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${url}`);
    const tls = u.protocol === "https:";
    const key = `${u.protocol}//${u.host}`;
    let origin = this.#origins.get(key);
    if (!origin) {
      const hostname = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
      origin = { key, hostname, port: Number(u.port || (tls ? 443 : 80)), tls, host: u.host };
      this.#origins.set(key, origin);
    }
    return { origin, target: `${u.pathname}${u.search}` };
  }

  #take(origin: Origin): Link | undefined {
    const list = this.#idle.get(origin.key);
    const now = Date.now();
    while (list && list.length > 0) {
      const link = list.pop()!;
      if (now - link.idleSince < this.#idleMs) return link;
      closeQuietly(link.conn);
    }
    return undefined;
  }

  #give(origin: Origin, link: Link): void {
    let list = this.#idle.get(origin.key);
    if (!list) this.#idle.set(origin.key, list = []);
    if (this.#closed || list.length >= this.#maxIdle) return closeQuietly(link.conn);
    link.idleSince = Date.now();
    list.push(link);
    this.#stopSweep ??= onTick(Math.max(50, this.#idleMs / 4), (now) => this.#sweep(now));
  }

  /** Closes connections idle past idleMs; stops ticking once none is idle. */
  #sweep(now: number): void {
    let left = 0;
    for (const [key, list] of this.#idle) {
      const keep = list.filter((l) => now - l.idleSince < this.#idleMs || (closeQuietly(l.conn), false));
      if (keep.length > 0) this.#idle.set(key, keep);
      else this.#idle.delete(key);
      left += keep.length;
    }
    if (left === 0) {
      this.#stopSweep?.();
      this.#stopSweep = undefined;
    }
  }

  async #connect(origin: Origin, signal: AbortSignal): Promise<Link> {
    let conn: Conn;
    const closeOnAbort = () => closeQuietly(conn);
    try {
      const tcp = await abortable(Deno.connect({ hostname: origin.hostname, port: origin.port }), signal);
      conn = tcp;
      if (signal.aborted) throw signal.reason;
      if (origin.tls) {
        signal.addEventListener("abort", closeOnAbort);
        try {
          const tls = await Deno.startTls(tcp, {
            hostname: origin.hostname,
            alpnProtocols: ["http/1.1"],
            ...(this.#caCerts ? { caCerts: this.#caCerts } : {}),
          });
          conn = tls;
          await tls.handshake();
        } finally {
          signal.removeEventListener("abort", closeOnAbort);
        }
      }
    } catch (err) {
      if (conn!) closeQuietly(conn);
      if (signal.aborted) throw signal.reason;
      throw new UpstreamConnectError(err instanceof Error ? err.message : String(err), { cause: err });
    }
    if (signal.aborted) {
      closeQuietly(conn);
      throw signal.reason;
    }
    if (!origin.tls) (conn as Deno.TcpConn).setNoDelay(true);
    return {
      conn,
      origin,
      buf: new Uint8Array(MIN_BUFFER),
      start: 0,
      end: 0,
      idleSince: 0,
      want: MIN_BUFFER,
    };
  }

  /**
   * Writes the request and reads the head; the body streams from the Response. A reused connection that
   * fails before any answer byte rejects with StaleConnection (the caller sends it on a new one).
   */
  async #exchange(link: Link, request: Uint8Array, signal: AbortSignal): Promise<Response> {
    const fresh = link.idleSince === 0;
    const aborted = () => closeQuietly(link.conn);
    signal.addEventListener("abort", aborted);
    const done = () => signal.removeEventListener("abort", aborted);
    let head: ResponseHead;
    try {
      try {
        for (let off = 0; off < request.length;) off += await link.conn.write(request.subarray(off));
      } catch (err) {
        throw fresh ? err : new StaleConnection();
      }
      head = await this.#readHead(link, fresh);
    } catch (err) {
      done();
      closeQuietly(link.conn);
      if (signal.aborted) throw signal.reason;
      throw err;
    }
    const origin = link.origin;
    const body = head.framing.kind === "none" ? null : this.#body(link, head, signal, origin, done);
    if (!body) {
      done();
      if (head.keepAlive) this.#give(origin, link);
      else closeQuietly(link.conn);
    }
    return new Response(body, { status: head.status, statusText: head.statusText, headers: head.headers });
  }

  /** The final head (1xx heads are read past); at EOF before any byte on a reused connection: StaleConnection. */
  async #readHead(link: Link, fresh: boolean): Promise<ResponseHead> {
    // Bytes after link.start already scanned (relative: a fill may move the buffered bytes to the front).
    let seen = 0;
    let any = link.end > link.start;
    for (;;) {
      const end = headEnd(link.buf, link.start + Math.max(0, seen - 3), link.end);
      if (end >= 0) {
        const head = parseHead(link.buf.subarray(link.start, end));
        link.start = end;
        if (head.status >= 200) {
          if (head.status > 599) throw new UpstreamProtocolFailure(`status ${head.status}`);
          return head;
        }
        if (head.status === 101) throw new UpstreamProtocolFailure("unexpected 101");
        seen = 0;
        continue;
      }
      seen = link.end - link.start;
      if (link.end - link.start > MAX_HEAD_BYTES) {
        throw new UpstreamProtocolFailure("response head too large");
      }
      let n: number | null;
      try {
        n = await fill(link, MAX_HEAD_BYTES + 4);
      } catch (err) {
        if (!fresh && !any) throw new StaleConnection();
        throw err;
      }
      if (n === null) {
        if (!fresh && !any) throw new StaleConnection();
        throw new UpstreamProtocolFailure("connection closed before the response head");
      }
      any = true;
    }
  }

  /**
   * The body as a stream: read from the connection only when pulled (backpressure), each pull one read's worth.
   * A plain stream, not a byte stream: a BYOB reader would take it in pieces of its own buffer's size, one
   * decode and one translation each (sse_parse.ts), where one read's worth goes whole (20% more streams/s). At its end the connection goes back to the pool when it may carry another request; cancelled or
   * failed, it is closed.
   */
  #body(
    link: Link,
    head: ResponseHead,
    signal: AbortSignal,
    origin: Origin,
    done: () => void,
  ): ReadableStream<Uint8Array> {
    const framing = head.framing;
    let left = framing.kind === "length" ? framing.length : Infinity;
    const chunked = framing.kind === "chunked" ? new ChunkedDecoder() : undefined;
    let over = false;
    const finish = (reuse: boolean) => {
      if (over) return;
      over = true;
      done();
      if (reuse && link.start === link.end) this.#give(origin, link);
      else closeQuietly(link.conn);
    };
    /** Data from what is buffered: one or more views, or none when the buffer holds no complete data. */
    const take = (): Uint8Array[] => {
      if (chunked) {
        const { data, used } = chunked.push(link.buf, link.start, link.end);
        link.start += used;
        return data;
      }
      const n = Math.min(left, link.end - link.start);
      if (n === 0) return [];
      const view = link.buf.subarray(link.start, link.start + n);
      link.start += n;
      left -= n;
      return [view];
    };
    const ended = () => chunked ? chunked.done : left === 0;
    /** After a cancel: reads the rest (discarded) within DRAIN_MS and DRAIN_BYTES; the connection is kept only
     *  if the body ended cleanly. */
    const drain = async () => {
      this.#draining.add(link.conn);
      const stop = deadline(DRAIN_MS, () => finish(false)); // closes the socket: a pending read rejects
      let read = 0;
      try {
        for (;;) {
          while (!over && !ended() && take().length > 0);
          if (over) return;
          if (ended()) return finish(head.keepAlive);
          if (link.start === link.end) link.start = link.end = 0;
          const n = this.#closed ? null : await fill(link, MAX_BUFFER);
          if (n === null || (read += n) > DRAIN_BYTES) return finish(false);
        }
      } catch {
        finish(false);
      } finally {
        stop();
        this.#draining.delete(link.conn);
      }
    };
    return new PlainStream<Uint8Array>({
      pull: async (c) => {
        try {
          for (;;) {
            const data = take();
            if (data.length > 0) {
              // Copies: the buffer is read into again.
              const total = data.reduce((s, d) => s + d.length, 0);
              const out = new Uint8Array(total);
              let at = 0;
              for (const d of data) {
                out.set(d, at);
                at += d.length;
              }
              if (ended()) finish(head.keepAlive);
              c.enqueue(out);
              if (over) c.close();
              return;
            }
            if (ended()) {
              finish(head.keepAlive);
              c.close();
              return;
            }
            if (link.start === link.end) link.start = link.end = 0;
            const n = await fill(link, MAX_BUFFER);
            if (n === null) {
              if (framing.kind === "close") {
                finish(false);
                c.close();
                return;
              }
              throw new UpstreamProtocolFailure("connection closed before the end of the body");
            }
          }
        } catch (err) {
          finish(false);
          c.error(signal.aborted ? signal.reason : err);
        }
      },
      cancel: () => {
        if (!over) void drain();
      },
    }, { highWaterMark: 0 });
  }
}

/** A reused connection the upstream had closed: the request was not answered, send it again. */
class StaleConnection extends Error {}

/**
 * Reads once into the link's buffer after `end`, growing it (up to `max`) when full; null at end of stream.
 * An empty buffer is first sized by the last read: one that filled all the room doubles it (up to MAX_BUFFER:
 * more was waiting, so a burst — a fast upstream's whole stream — comes in a few reads, each one pipeline
 * step), one that brought under a quarter of it brings it back to MIN_BUFFER (what an idle stream holds).
 */
async function fill(link: Link, max: number): Promise<number | null> {
  if (link.start === link.end && link.buf.length !== link.want) {
    link.buf = new Uint8Array(link.want);
    link.start = link.end = 0;
  }
  if (link.start > 0 && link.end === link.buf.length) {
    link.buf.copyWithin(0, link.start, link.end);
    link.end -= link.start;
    link.start = 0;
  }
  if (link.end === link.buf.length) {
    if (link.buf.length >= max) throw new UpstreamProtocolFailure("response line too long");
    const grown = new Uint8Array(Math.min(max, link.buf.length * 2));
    grown.set(link.buf.subarray(0, link.end));
    link.buf = grown;
  }
  const room = link.buf.length - link.end;
  const n = await link.conn.read(link.buf.subarray(link.end));
  if (n !== null) {
    link.end += n;
    const size = link.buf.length;
    link.want = n === room ? Math.min(MAX_BUFFER, 2 * size) : 4 * n < size ? MIN_BUFFER : size;
  }
  return n;
}

function requestBytes(
  method: string,
  target: string,
  host: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Uint8Array {
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${host}\r\nuser-agent: ${USER_AGENT}\r\naccept: */*\r\n` +
    `content-length: ${body.length}\r\n`;
  for (const name in headers) {
    const value = headers[name]!;
    if (UNSAFE.test(name) || UNSAFE.test(value) || name === "" || name.includes(":")) {
      throw new TypeError(`upstream header ${JSON.stringify(name)} is not a valid header`);
    }
    head += `${name}: ${value}\r\n`;
  }
  head += "\r\n";
  const out = new Uint8Array(head.length * 3 + body.length);
  const { written } = encoder.encodeInto(head, out);
  out.set(body, written);
  return out.subarray(0, written + body.length);
}

/**
 * `connecting`, or the signal's reason as soon as it aborts (Deno.connect itself cannot be aborted: a host that
 * never answers would hold the call past its timeout); a connection made after the abort is closed.
 */
function abortable(connecting: Promise<Deno.TcpConn>, signal: AbortSignal): Promise<Deno.TcpConn> {
  return new Promise((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    signal.addEventListener("abort", aborted);
    connecting.then((conn) => {
      signal.removeEventListener("abort", aborted);
      if (signal.aborted) closeQuietly(conn);
      else resolve(conn);
    }, (err) => {
      signal.removeEventListener("abort", aborted);
      reject(err);
    });
  });
}

function closeQuietly(conn: Conn | undefined): void {
  try {
    conn?.close();
  } catch { /* already closed */ }
}
