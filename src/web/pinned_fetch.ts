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
 */

export class FetchFailed extends Error {
  constructor(
    readonly kind: "connect" | "tls" | "protocol" | "timeout" | "too_large",
    message: string,
  ) {
    super(message);
    this.name = "FetchFailed";
  }
}

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

export interface FetchStats {
  connectedTo: string[];
  wireBytes: number;
}

export interface PinnedResponse {
  status: number;
  headers: Headers;
  /** Reads and decodes the body (chunked, length, or to close); `complete` is false when cut short. */
  readBody(): Promise<{ bytes: Uint8Array; complete: boolean }>;
  close(): void;
}

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 8 * 1024;
/** Allowance for chunk framing on top of the body limit, bytes. */
const FRAMING_ALLOWANCE = 256 * 1024;
const READ_CHUNK = 64 * 1024;

const enc = new TextEncoder();
const latin1 = new TextDecoder("latin1");

type Conn = Deno.TcpConn | Deno.TlsConn;

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
    try {
      this.#conn?.close();
    } catch { /* already closed */ }
    this.#conn = undefined;
  }

  dispose() {
    this.clearPhase();
    clearTimeout(this.#total);
    this.#closeConn();
  }
}

class WireReader {
  #pending = new Uint8Array(0);
  #firstByte = false;
  eof = false;

  constructor(
    private readonly conn: Conn,
    private readonly maxWire: number,
    private readonly dog: Watchdog,
    private readonly stats: FetchStats | undefined,
    private readonly onFirstByte: () => void,
  ) {}

  get pendingLength() {
    return this.#pending.length;
  }

  /** Reads more bytes from the socket; false on end of stream. */
  async fill(): Promise<boolean> {
    if (this.eof) return false;
    const chunk = new Uint8Array(READ_CHUNK);
    let n: number | null;
    try {
      n = await this.conn.read(chunk);
    } catch (err) {
      if (this.dog.fired) throw new FetchFailed("timeout", `timed out (${this.dog.fired})`);
      throw new FetchFailed("protocol", `read failed: ${err instanceof Error ? err.message : err}`);
    }
    if (this.dog.fired) throw new FetchFailed("timeout", `timed out (${this.dog.fired})`);
    if (n === null) {
      this.eof = true;
      return false;
    }
    if (!this.#firstByte) {
      this.#firstByte = true;
      this.onFirstByte();
    }
    if (this.stats) this.stats.wireBytes += n;
    this.#wire += n;
    if (this.#wire > this.maxWire) throw new FetchFailed("too_large", "page is over the size limit");
    const next = new Uint8Array(this.#pending.length + n);
    next.set(this.#pending);
    next.set(chunk.subarray(0, n), this.#pending.length);
    this.#pending = next;
    return true;
  }
  #wire = 0;

  /** Takes up to `n` pending bytes (filling once if none are pending); empty at end of stream. */
  async take(n: number): Promise<Uint8Array> {
    if (this.#pending.length === 0 && !(await this.fill())) return new Uint8Array(0);
    const out = this.#pending.subarray(0, Math.min(n, this.#pending.length));
    this.#pending = this.#pending.subarray(out.length);
    return out;
  }

  /** Everything up to (and excluding) the first `\r\n\r\n`; undefined on a stream that ends first. */
  async head(): Promise<string | undefined> {
    for (;;) {
      const i = indexOf(this.#pending, [13, 10, 13, 10]);
      if (i >= 0) {
        const text = latin1.decode(this.#pending.subarray(0, i));
        this.#pending = this.#pending.subarray(i + 4);
        return text;
      }
      if (this.#pending.length > MAX_HEAD_BYTES) throw new FetchFailed("protocol", "response head too large");
      if (!(await this.fill())) return undefined;
    }
  }

  /** One CRLF-terminated line; undefined on end of stream. */
  async line(): Promise<string | undefined> {
    for (;;) {
      const i = indexOf(this.#pending, [13, 10]);
      if (i >= 0) {
        const text = latin1.decode(this.#pending.subarray(0, i));
        this.#pending = this.#pending.subarray(i + 2);
        return text;
      }
      if (this.#pending.length > MAX_LINE_BYTES) throw new FetchFailed("protocol", "line too long");
      if (!(await this.fill())) return undefined;
    }
  }
}

function indexOf(hay: Uint8Array, needle: number[]): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

class BodySink {
  chunks: Uint8Array[] = [];
  size = 0;
  constructor(private readonly max: number) {}
  push(b: Uint8Array) {
    if (b.length === 0) return;
    this.size += b.length;
    if (this.size > this.max) throw new FetchFailed("too_large", "page is over the size limit");
    this.chunks.push(b.slice());
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let off = 0;
    for (const c of this.chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
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

function parseHead(head: string): { status: number; headers: Headers } {
  const lines = head.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (!m) throw new FetchFailed("protocol", "not an HTTP/1.x response");
  const headers = new Headers();
  for (const line of lines.slice(1)) {
    const i = line.indexOf(":");
    if (i <= 0 || /^\s/.test(line)) throw new FetchFailed("protocol", "malformed response header");
    try {
      headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
    } catch {
      throw new FetchFailed("protocol", "malformed response header");
    }
  }
  return { status: Number(m[1]), headers };
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
    const reader = new WireReader(
      conn,
      opts.maxBodyBytes + MAX_HEAD_BYTES + FRAMING_ALLOWANCE,
      dog,
      opts.stats,
      () => dog.clearPhase(),
    );
    let status: number;
    let headers: Headers;
    for (;;) {
      const head = await reader.head();
      if (head === undefined) throw new FetchFailed("protocol", "connection closed before a response");
      ({ status, headers } = parseHead(head));
      if (status >= 200 || status === 101) break; // skip 100 Continue and other interim responses
    }
    if (status === 101) throw new FetchFailed("protocol", "unexpected protocol switch");
    const declared = headers.get("content-length");
    const te = headers.get("transfer-encoding");
    let length: number | undefined;
    if (te === null && declared !== null) {
      const values = [...new Set(declared.split(",").map((v) => v.trim()))];
      if (values.length !== 1 || !/^\d{1,15}$/.test(values[0]!)) {
        throw new FetchFailed("protocol", "bad Content-Length");
      }
      length = Number(values[0]);
    }
    const noBody = status === 204 || status === 304;
    const chunked = te !== null && te.split(",").at(-1)!.trim().toLowerCase() === "chunked";

    const readBody = async (): Promise<{ bytes: Uint8Array; complete: boolean }> => {
      if (noBody) return { bytes: new Uint8Array(0), complete: true };
      if (length !== undefined && length > opts.maxBodyBytes) {
        throw new FetchFailed("too_large", "declared Content-Length is over the size limit");
      }
      const sink = new BodySink(opts.maxBodyBytes);
      let complete = true;
      if (chunked) {
        complete = false;
        for (;;) {
          const line = await reader.line();
          if (line === undefined) break;
          const size = /^([0-9a-fA-F]{1,8})\s*(;.*)?$/.exec(line)?.[1];
          if (size === undefined) throw new FetchFailed("protocol", "bad chunk size");
          let left = parseInt(size, 16);
          if (left === 0) {
            complete = true;
            break; // trailers are ignored; the connection is closed anyway
          }
          if (sink.size + left > opts.maxBodyBytes) {
            throw new FetchFailed("too_large", "chunk takes the page over the size limit");
          }
          while (left > 0) {
            const part = await reader.take(left);
            if (part.length === 0) break;
            sink.push(part);
            left -= part.length;
          }
          if (left > 0) break;
          if ((await reader.line()) !== "") {
            if (reader.eof) break;
            throw new FetchFailed("protocol", "chunk not followed by CRLF");
          }
        }
      } else if (length !== undefined) {
        let left = length;
        while (left > 0) {
          const part = await reader.take(left);
          if (part.length === 0) break;
          sink.push(part);
          left -= part.length;
        }
        complete = left === 0;
      } else {
        for (;;) {
          const part = await reader.take(READ_CHUNK);
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
