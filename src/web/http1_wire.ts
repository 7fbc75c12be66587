/**
 * HTTP/1.1 response framing read straight off a socket, for the pinned client (pinned_fetch.ts):
 * bytes counted on the wire, a bounded head, no buffering past the size limit. Chunked coding is the upstream
 * client's decoder (src/upstream/http1_framing.ts); the head is read leniently here, as any web server may
 * send it, where the upstream client refuses what a model provider has no reason to send.
 */
import { type ChunkedDecoder, headEnd, UpstreamProtocolFailure } from "../upstream/http1_framing.ts";
import { concatBytes } from "../util/bytes.ts";

export class FetchFailed extends Error {
  constructor(
    readonly kind: "connect" | "tls" | "protocol" | "timeout" | "too_large",
    message: string,
  ) {
    super(message);
    this.name = "FetchFailed";
  }
}

export interface FetchStats {
  connectedTo: string[];
  wireBytes: number;
}

export type Conn = Deno.TcpConn | Deno.TlsConn;

/** What the reader needs of the watchdog: whether (and why) a timeout closed the connection. */
export interface TimeoutState {
  readonly fired: string | undefined;
}

export const MAX_HEAD_BYTES = 64 * 1024;
export const READ_CHUNK = 64 * 1024;
const latin1 = new TextDecoder("latin1");

export class WireReader {
  #pending = new Uint8Array(0);
  #firstByte = false;
  eof = false;

  constructor(
    private readonly conn: Conn,
    private readonly maxWire: number,
    private readonly dog: TimeoutState,
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
      const end = headEnd(this.#pending, 0, this.#pending.length);
      if (end >= 0) {
        const text = latin1.decode(this.#pending.subarray(0, end - 4));
        this.#pending = this.#pending.subarray(end);
        return text;
      }
      if (this.#pending.length > MAX_HEAD_BYTES) throw new FetchFailed("protocol", "response head too large");
      if (!(await this.fill())) return undefined;
    }
  }

  /** The chunked body's data in what is pending (views: the caller copies them before the next fill). */
  decode(chunked: ChunkedDecoder): Uint8Array[] {
    try {
      const { data, used } = chunked.push(this.#pending, 0, this.#pending.length);
      this.#pending = this.#pending.subarray(used);
      return data;
    } catch (err) {
      if (err instanceof UpstreamProtocolFailure) throw new FetchFailed("protocol", err.message);
      throw err;
    }
  }
}

export class BodySink {
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
    return this.chunks.length === 0 ? new Uint8Array(0) : concatBytes(this.chunks);
  }
}

export function parseHead(head: string): { status: number; headers: Headers } {
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
