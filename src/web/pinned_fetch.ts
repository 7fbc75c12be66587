/**
 * A minimal HTTP/1.1 GET client that connects to an already checked IP address ("pinning") while
 * speaking to the original host name.
 *
 * Why not `fetch`: plain `fetch(url)` resolves the name again by itself, so the checked answer could
 * differ from the one it connects to (DNS rebinding). `Deno.createHttpClient({proxy: {transport: "tcp"}})`
 * does pin the socket, but in Deno 2.9 it speaks plaintext HTTP over that socket even for https URLs
 * (verified: the TLS server sees a cleartext request), so it cannot be used for https.
 *
 * What this client does instead:
 * - TCP: `Deno.connect({hostname: <checked IP>, port})` — the only address it can reach is one the
 *   guard checked. No name is ever handed to the OS resolver here.
 * - TLS: `Deno.startTls(tcp, {hostname: <URL host name>})` — SNI is the host name and the certificate
 *   chain is verified against the system roots and against that host name (rustls). A certificate for
 *   another name fails the handshake (tested on loopback with a test CA).
 * - HTTP/1.1 with `Host: <URL host>`, `Connection: close`, `Accept-Encoding: identity`; one request
 *   per connection, no pool, so a later request can never reuse a socket opened for another check.
 * - Bytes are counted as they come off the socket; the connection is closed as soon as the body
 *   passes the limit (a declared Content-Length over the limit closes it before the body is read).
 * - Timeouts: connect (TCP + TLS handshake), first byte of the response, and a total deadline.
 * - The answer is read by the HTTP/1.1 module (src/http1) through page_reader.ts: heads by its lenient rules
 *   (any web server may answer), the body framed by length, chunked coding or the end of the connection.
 */
import { ChunkedDecoder } from "../http1/chunked.ts";
import { MAX_HEAD_BYTES, type ResponseHead } from "../http1/head.ts";
import { closeQuietly, type Conn } from "../http1/reader.ts";
import { BodySink, FetchFailed, type FetchStats, PageReader } from "./page_reader.ts";

export { FetchFailed, type FetchStats } from "./page_reader.ts";

export interface PinnedTarget {
  url: URL;
  host: string;
  port: number;
  tls: boolean;
  /** Checked addresses; tried in order on TCP connect failure. */
  addresses: string[];
}

export interface PinnedOptions {
  /** Largest decoded body accepted, bytes. */
  maxBodyBytes: number;
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  /** Absolute time (Date.now() scale) by which the whole fetch must be finished. */
  deadline: number;
  /** Extra trusted roots in PEM; tests only (production uses the system roots). */
  caCerts?: string[];
  /** Observability for tests: addresses connected to and raw bytes read. */
  stats?: FetchStats;
}

export interface PinnedResponse {
  status: number;
  headers: Headers;
  /** Reads and decodes the body (chunked, length, or to close); `complete` is false when cut short. */
  readBody(): Promise<{ bytes: Uint8Array; complete: boolean }>;
  close(): void;
}

/** Allowance for chunk framing on top of the body limit, bytes. */
const FRAMING_ALLOWANCE = 256 * 1024;

const enc = new TextEncoder();

/** Watches one connection: closes it when a phase or the total deadline runs out. */
class Watchdog {
  fired: string | undefined;
  #conn: Conn | undefined;
  #phase: ReturnType<typeof setTimeout> | undefined;
  #total: ReturnType<typeof setTimeout>;

  constructor(deadline: number, private readonly abort: AbortController) {
    this.#total = setTimeout(() => this.#fire("total time"), Math.max(0, deadline - Date.now()));
  }

  attach(conn: Conn) {
    this.#conn = conn;
    if (this.fired) this.#closeConn();
  }

  phase(name: string, ms: number) {
    this.clearPhase();
    this.#phase = setTimeout(() => this.#fire(name), ms);
  }

  clearPhase() {
    if (this.#phase !== undefined) clearTimeout(this.#phase);
    this.#phase = undefined;
  }

  #fire(what: string) {
    this.fired ??= what;
    this.abort.abort();
    this.#closeConn();
  }

  #closeConn() {
    closeQuietly(this.#conn);
    this.#conn = undefined;
  }

  dispose() {
    this.clearPhase();
    clearTimeout(this.#total);
    this.#closeConn();
  }
}

async function connectPinned(
  target: PinnedTarget,
  opts: PinnedOptions,
  dog: Watchdog,
  abort: AbortController,
) {
  let lastErr: unknown;
  for (const address of target.addresses) {
    dog.phase("connect", opts.connectTimeoutMs);
    let tcp: Deno.TcpConn;
    try {
      tcp = await Deno.connect({ hostname: address, port: target.port, signal: abort.signal });
    } catch (err) {
      if (dog.fired) throw new FetchFailed("timeout", `timed out (${dog.fired})`);
      lastErr = err;
      continue;
    }
    dog.attach(tcp);
    opts.stats?.connectedTo.push(address);
    if (!target.tls) return tcp;
    try {
      const tls = await Deno.startTls(tcp, {
        hostname: target.host,
        alpnProtocols: ["http/1.1"],
        ...(opts.caCerts ? { caCerts: opts.caCerts } : {}),
      });
      dog.attach(tls);
      await tls.handshake();
      return tls;
    } catch (err) {
      if (dog.fired) throw new FetchFailed("timeout", `timed out (${dog.fired})`);
      throw new FetchFailed(
        "tls",
        `TLS with ${target.host} failed: ${err instanceof Error ? err.message : err}`,
      );
    }
  }
  throw new FetchFailed("connect", `cannot connect: ${lastErr instanceof Error ? lastErr.message : lastErr}`);
}

/** Sends one GET to the pinned address and reads the response head. */
export async function pinnedGet(target: PinnedTarget, opts: PinnedOptions): Promise<PinnedResponse> {
  const abort = new AbortController();
  const dog = new Watchdog(opts.deadline, abort);
  try {
    const conn = await connectPinned(target, opts, dog, abort);
    const path = target.url.pathname + target.url.search;
    const request = `GET ${path} HTTP/1.1\r\nHost: ${target.url.host}\r\n` +
      `User-Agent: Mozilla/5.0 (compatible; gateway-fetch/1.0)\r\n` +
      `Accept: text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.5\r\n` +
      `Accept-Encoding: identity\r\nConnection: close\r\n\r\n`;
    dog.phase("first byte", opts.firstByteTimeoutMs);
    try {
      await conn.write(enc.encode(request));
    } catch (err) {
      if (dog.fired) throw new FetchFailed("timeout", `timed out (${dog.fired})`);
      throw new FetchFailed("connect", `write failed: ${err instanceof Error ? err.message : err}`);
    }
    const reader = new PageReader(
      conn,
      opts.maxBodyBytes + MAX_HEAD_BYTES + FRAMING_ALLOWANCE,
      dog,
      opts.stats,
      () => dog.clearPhase(),
    );
    let head: ResponseHead;
    for (;;) {
      const next = await reader.head();
      if (next === undefined) throw new FetchFailed("protocol", "connection closed before a response");
      head = next;
      if (head.status >= 200 || head.status === 101) break; // skip 100 Continue and other interim responses
    }
    const status = head.status;
    if (status === 101) throw new FetchFailed("protocol", "unexpected protocol switch");
    // Framing by the lenient rules (src/http1/head.ts): none for 204 and 304, chunked when it is the last
    // coding, else a Content-Length when no Transfer-Encoding came, else to the end of the connection.
    const framing = head.framing;
    const headers = new Headers(head.headers);

    const readBody = async (): Promise<{ bytes: Uint8Array; complete: boolean }> => {
      if (framing.kind === "none") return { bytes: new Uint8Array(0), complete: true };
      if (framing.kind === "length" && framing.length > opts.maxBodyBytes) {
        throw new FetchFailed("too_large", "declared Content-Length is over the size limit");
      }
      const sink = new BodySink(opts.maxBodyBytes);
      let complete = true;
      if (framing.kind === "chunked") {
        // To the last chunk and the trailers' end; a body the server cut short is kept, marked incomplete.
        const decoder = new ChunkedDecoder();
        for (;;) {
          for (const part of reader.decode(decoder)) sink.push(part);
          if (decoder.done || !(await reader.fill())) break;
        }
        complete = decoder.done;
      } else if (framing.kind === "length") {
        let left = framing.length;
        while (left > 0) {
          const part = await reader.take(left);
          if (part.length === 0) break;
          sink.push(part);
          left -= part.length;
        }
        complete = left === 0;
      } else {
        for (;;) {
          const part = await reader.take(Infinity);
          if (part.length === 0) break;
          sink.push(part);
        }
      }
      return { bytes: sink.bytes(), complete };
    };

    return {
      status,
      headers,
      readBody: async () => {
        try {
          return await readBody();
        } finally {
          dog.dispose();
        }
      },
      close: () => dog.dispose(),
    };
  } catch (err) {
    dog.dispose();
    throw err;
  }
}
