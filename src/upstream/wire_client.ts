/**
 * The upstream calls' HTTP/1.1 client: keep-alive connections per origin, each request written in one write,
 * the response read by the HTTP/1.1 module (src/http1, its strict rules) and handed back as a WireResponse
 * (upstream_response.ts: what the engine reads of a Response). Why not Deno's fetch: it costs a proxied JSON
 * request ≈30 µs of CPU more than this client (docs/performance.md "What Deno's fetch costs"), a fifth of the
 * gateway's whole cost per request. Plain http and https (TLS with ALPN http/1.1). `UPSTREAM_CLIENT=fetch`, or
 * an HTTP(S)_PROXY in the environment (which fetch honours and this client does not), keeps fetch
 * (src/upstream/client.ts).
 *
 * Failures read as fetch's do for the retry rule (retry.ts): a connection that cannot be made is an
 * UpstreamConnectError; an abort rejects with the signal's reason, and closes the connection. A connection
 * taken from the pool that the upstream closed meanwhile (its idle timeout racing our request) fails before
 * any answer byte: that one request is sent again on a new connection, as hyper and undici do.
 *
 * An answer reaches only the request it answers (RFC 9112 §9.3: responses come in request order, and a
 * connection carries one request at a time here):
 * - An idle connection is watched (src/http1/reader.ts readAhead): a byte, end of stream or error while it
 *   sits in the pool closes it, so nothing the upstream writes between requests is read as the next request's
 *   answer.
 * - On a reused connection, anything that arrives before the request is completely written is not its answer
 *   (the upstream had not read it yet): the connection is closed unread and the request goes on a new one.
 *   On a new connection such an early answer can only be ours (RFC 9112 §9.5: a server may answer, 413 say,
 *   before reading the whole body): it is read, and the connection is not reused.
 * - A connection goes back to the pool only after an answer framed exactly (Content-Length or chunked, keep-
 *   alive on both sides) and read to its end with not one byte beyond it; after any error, abort, or a cancel
 *   whose brief drain did not end exactly at the answer's end, it is closed.
 * What no client can tell apart remains: bytes the upstream writes while our request is on its way are read as
 * its answer — the reason HTTP/1.1 clients do not pipeline, and why the watch closes idle connections at once.
 */
import { writeBatch } from "../util/yield_turn.ts";
import { onTick, stopTicking, type Ticking } from "../util/ticker.ts";
import { headEnd, MAX_HEAD_BYTES, parseHead, type ResponseHead } from "../http1/head.ts";
import {
  type BufferedConn,
  bufferedConn,
  closeQuietly,
  type Conn,
  fill,
  readAhead,
} from "../http1/reader.ts";
import { bodyChunks, type DrainOwner } from "./wire_link.ts";
import { upstreamFailure, UpstreamProtocolFailure } from "./protocol_failure.ts";
import { type UpstreamResponse, WireResponse } from "./upstream_response.ts";
import { EntryList } from "../util/entry_list.ts";
import { ByteSlab } from "../util/byte_slab.ts";
import { asksClose, requestBytes } from "./wire_request.ts";
import { connectTo, type Origin, Targets } from "./wire_connect.ts";

export interface WireInit {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  signal: AbortSignal;
}

/** The part of fetch the upstream calls use. */
export type UpstreamFetch = (url: string, init: WireInit) => Promise<UpstreamResponse>;

export interface WireClientOptions {
  /** Idle connections kept per origin (beyond them a finished connection is closed). */
  maxIdlePerOrigin?: number;
  /** An idle connection is closed after this long: below the 5 s keep-alive of common servers (Node's). */
  idleMs?: number;
  /** Extra root certificates (PEM) for https upstreams; tests use their own. */
  caCerts?: string[];
}

/** A connection in the pool: its buffered reader (src/http1/reader.ts), its origin, since when it is idle. */
interface Pooled extends BufferedConn {
  origin: Origin;
  /** 0 until it first goes idle: a new connection. */
  idleSince: number;
  /** In the pool: taken out and closed if its read ahead settles (the idle watch). */
  idle: boolean;
  /** The idle watch's callback (one per connection). */
  drop: () => void;
}

/** Interim (1xx) heads read past before the final one; more fail the call (RFC 9110 §15.2 sets no bound). */
const MAX_INTERIM_HEADS = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class WireClient {
  readonly #idle = new Map<string, Pooled[]>();
  /** Connections whose cancelled body is being read to its end (wire_link.ts bodyChunks). */
  readonly #draining = new EntryList<Conn>();
  readonly #drains: DrainOwner = { draining: this.#draining, closed: () => this.#closed };
  readonly #targets = new Targets();
  /** The requests' bytes (≈0.8 µs less than an array of their own each). */
  readonly #bytes = new ByteSlab();
  readonly #maxIdle: number;
  readonly #idleMs: number;
  readonly #caCerts: string[] | undefined;
  #sweeping: Ticking | undefined;
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
    // Their answers carry no body whatever their head says (RFC 9112 §6.3): read as others, they would
    // desynchronise the connection. The upstream calls never send them.
    if (init.method === "HEAD" || init.method === "CONNECT") {
      throw new TypeError(`${init.method} is not sent`);
    }
    const { origin, target } = this.#targets.of(url);
    // From the slab: these bytes are only copied into the request, and the request's only written to the
    // socket, never kept or handed on (byte_slab.ts).
    const body = typeof init.body === "string" ? this.#encoded(init.body) : init.body;
    const request = requestBytes(init.method, target, origin.host, init.headers, body, this.#bytes);
    const keepAlive = !asksClose(init.headers);
    // The requests of one loop turn are written together, at its end (docs/performance.md "Upstream writes
    // at the turn's end").
    const batch = writeBatch();
    if (batch) {
      await batch;
      signal.throwIfAborted();
    }
    const reused = this.#take(origin);
    if (reused) {
      try {
        return await this.#exchange(reused, request, signal, keepAlive);
      } catch (err) {
        if (!(err instanceof StaleConnection)) throw err;
      }
    }
    return await this.#exchange(await this.#connect(origin, signal), request, signal, keepAlive);
  };

  /** Closes every idle connection; answers still being read finish on theirs, which are then closed. */
  close(): void {
    this.#closed = true;
    for (const conn of this.#draining.takeAll()) closeQuietly(conn);
    for (const list of this.#idle.values()) {
      for (const l of list) {
        l.idle = false;
        closeQuietly(l.conn);
      }
    }
    this.#idle.clear();
    if (this.#sweeping) stopTicking(this.#sweeping);
    this.#sweeping = undefined;
  }

  /** A translated request's body (JSON text) as UTF-8, in the slab. */
  #encoded(text: string): Uint8Array {
    // 3 bytes a character is only a bound: past the slab's arrays, an exact array of its own.
    if (text.length * 3 > this.#bytes.largest) return encoder.encode(text);
    const out = this.#bytes.take(text.length * 3);
    return this.#bytes.keep(out, encoder.encodeInto(text, out).written);
  }

  #take(origin: Origin): Pooled | undefined {
    const list = this.#idle.get(origin.key);
    const now = Date.now();
    while (list && list.length > 0) {
      const link = list.pop()!;
      link.idle = false;
      link.onArrival = undefined;
      // Its watch may have settled with its callback still queued: such a connection is not used.
      if (now - link.idleSince < this.#idleMs && !link.arrived) {
        link.conn.ref();
        return link;
      }
      closeQuietly(link.conn);
    }
    return undefined;
  }

  /** Pools a connection whose answer ended exactly (its buffer empty), watched while idle. */
  #give(origin: Origin, link: Pooled): void {
    let list = this.#idle.get(origin.key);
    if (!list) this.#idle.set(origin.key, list = []);
    // Bytes past the answer (a next answer nobody asked for), or a read still pending: never pooled.
    if (this.#closed || list.length >= this.#maxIdle || link.start !== link.end || link.ahead) {
      return closeQuietly(link.conn);
    }
    link.idleSince = Date.now();
    link.idle = true;
    link.onArrival = link.drop;
    readAhead(link);
    // An idle connection's pending read does not keep the process alive (ref'd again when taken).
    link.conn.unref();
    list.push(link);
    this.#sweeping ??= onTick(Math.max(50, this.#idleMs / 4), (now) => this.#sweep(now));
  }

  /** The idle watch fired: whatever came (a stray answer, excess bytes, end of stream) closes the connection. */
  #drop(link: Pooled): void {
    if (!link.idle) return;
    link.idle = false;
    link.onArrival = undefined;
    const list = this.#idle.get(link.origin.key);
    const at = list ? list.indexOf(link) : -1;
    if (at >= 0) list!.splice(at, 1);
    closeQuietly(link.conn);
  }

  /** Closes connections idle past idleMs; stops ticking once none is idle. */
  #sweep(now: number): void {
    let left = 0;
    for (const [key, list] of this.#idle) {
      const keep = list.filter((l) =>
        now - l.idleSince < this.#idleMs || (l.idle = false, closeQuietly(l.conn), false)
      );
      if (keep.length > 0) this.#idle.set(key, keep);
      else this.#idle.delete(key);
      left += keep.length;
    }
    if (left === 0) {
      if (this.#sweeping) stopTicking(this.#sweeping);
      this.#sweeping = undefined;
    }
  }

  async #connect(origin: Origin, signal: AbortSignal): Promise<Pooled> {
    const conn = await connectTo(origin, signal, this.#caCerts);
    const link: Pooled = {
      ...bufferedConn(conn),
      origin,
      idleSince: 0,
      idle: false,
      drop: () => this.#drop(link),
    };
    return link;
  }

  /**
   * Writes the request and reads the head; the body streams from the answer unless it came whole with the head.
   * A reused connection that fails before any answer byte, or on which bytes arrived before the request was
   * written, rejects with StaleConnection (the caller sends it on a new one).
   */
  async #exchange(
    link: Pooled,
    request: Uint8Array,
    signal: AbortSignal,
    keepAlive: boolean,
  ): Promise<WireResponse> {
    const fresh = link.idleSince === 0;
    const aborted = () => closeQuietly(link.conn);
    signal.addEventListener("abort", aborted);
    const done = () => signal.removeEventListener("abort", aborted);
    let head: ResponseHead;
    try {
      // A new connection's first read goes out before the request: it shows an answer that comes early.
      if (fresh) readAhead(link);
      else if (link.arrived) throw new StaleConnection();
      try {
        for (let off = 0; off < request.length;) off += await link.conn.write(request.subarray(off));
      } catch (err) {
        // A new connection's early answer (413 and close, say) may be why the write failed: it is read.
        if (!fresh || !(await earlyBytes(link))) throw fresh ? err : new StaleConnection();
      }
      if (link.arrived) {
        // Before the request was written: on a reused connection not its answer; on a new one, ours, but
        // the upstream may not have read the whole request, so the connection is not reused.
        if (!fresh) throw new StaleConnection();
        keepAlive = false;
      }
      head = await this.#readHead(link, fresh);
      if (!keepAlive) head.keepAlive = false;
    } catch (err) {
      done();
      closeQuietly(link.conn);
      if (signal.aborted) throw signal.reason;
      throw upstreamFailure(err);
    }
    const origin = link.origin;
    const framing = head.framing;
    if (framing.kind === "length" && link.end - link.start >= framing.length) {
      // The whole body came with the head (a JSON answer, an error): decoded at once, no stream to read it
      // through (≈10 µs less CPU per JSON request, c=1 latency −0.02–0.03 ms), and no copy of its bytes to
      // decode later (an array of its own costs ≈0.8 µs; upstream_response.ts encodes again for a byte reader).
      const text = decoder.decode(link.buf.subarray(link.start, link.start + framing.length));
      link.start += framing.length;
      done();
      if (head.keepAlive && link.start === link.end) {
        link.start = link.end = 0;
        this.#give(origin, link);
      } else closeQuietly(link.conn);
      return new WireResponse(head, text);
    }
    const body = framing.kind === "none" ? null : bodyChunks(link, head, signal, (reuse) => {
      done();
      if (reuse) this.#give(origin, link);
      else closeQuietly(link.conn);
    }, this.#drains);
    if (!body) {
      done();
      if (head.keepAlive) this.#give(origin, link);
      else closeQuietly(link.conn);
    }
    return new WireResponse(head, body);
  }

  /**
   * The final head (up to MAX_INTERIM_HEADS 1xx heads are read past; 101 fails: nothing was asked to switch);
   * at EOF before any byte on a reused connection: StaleConnection.
   */
  async #readHead(link: Pooled, fresh: boolean): Promise<ResponseHead> {
    // Bytes after link.start already scanned (relative: a fill may move the buffered bytes to the front).
    let seen = 0;
    let any = link.end > link.start;
    let interim = 0;
    for (;;) {
      const end = headEnd(link.buf, link.start + Math.max(0, seen - 3), link.end);
      if (end >= 0) {
        const head = parseHead(link.buf.subarray(link.start, end), "strict");
        link.start = end;
        if (head.status >= 200) {
          if (head.status > 599) throw new UpstreamProtocolFailure(`status ${head.status}`);
          return head;
        }
        if (head.status === 101) throw new UpstreamProtocolFailure("unexpected 101");
        if (++interim > MAX_INTERIM_HEADS) throw new UpstreamProtocolFailure("too many 1xx responses");
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
}

/**
 * A reused connection the upstream had closed, or that brought bytes before the request was written (no answer
 * to it): the request was not answered, send it again on a new connection.
 */
class StaleConnection extends Error {}

/** After a failed write on a new connection: whether the read ahead brought bytes (an early answer). */
async function earlyBytes(link: BufferedConn): Promise<boolean> {
  const n = await fill(link, MAX_HEAD_BYTES + 4).catch(() => null);
  return n !== null;
}
