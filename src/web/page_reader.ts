/**
 * The page fetch's side of the wire (pinned_fetch.ts): the HTTP/1.1 module's bounded reader (src/http1) with
 * every byte counted as it comes off the socket, a cap on the bytes read in all, the first byte signalled (its
 * timeout), and a timeout that closed the connection told apart from a broken read. Heads are read by the
 * module's lenient rules: any web server may answer, where the upstream client reads by the strict ones.
 */
import { Http1Failure } from "../http1/failure.ts";
import { ChunkedDecoder } from "../http1/chunked.ts";
import { headEnd, MAX_HEAD_BYTES, parseHead, type ResponseHead } from "../http1/head.ts";
import { type BufferedConn, bufferedConn, type Conn, fill, MAX_BUFFER } from "../http1/reader.ts";
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

/** What the reader needs of the watchdog: whether (and why) a timeout closed the connection. */
export interface TimeoutState {
  readonly fired: string | undefined;
}

/** An Http1Failure as the page fetch fails with it. */
function protocolFailure(err: unknown): unknown {
  return err instanceof Http1Failure ? new FetchFailed("protocol", err.message) : err;
}

export class PageReader {
  readonly #in: BufferedConn;
  #firstByte = false;
  #wire = 0;
  #eof = false;

  constructor(
    conn: Conn,
    private readonly maxWire: number,
    private readonly dog: TimeoutState,
    private readonly stats: FetchStats | undefined,
    private readonly onFirstByte: () => void,
  ) {
    this.#in = bufferedConn(conn);
  }

  /** Reads more bytes from the socket (a buffer of at most `max`); false on end of stream. */
  async fill(max = MAX_BUFFER): Promise<boolean> {
    if (this.#eof) return false;
    const r = this.#in;
    if (r.start === r.end) r.start = r.end = 0;
    let n: number | null;
    try {
      n = await fill(r, max);
    } catch (err) {
      if (this.dog.fired) throw new FetchFailed("timeout", `timed out (${this.dog.fired})`);
      if (err instanceof Http1Failure) throw protocolFailure(err);
      throw new FetchFailed("protocol", `read failed: ${err instanceof Error ? err.message : err}`);
    }
    if (this.dog.fired) throw new FetchFailed("timeout", `timed out (${this.dog.fired})`);
    if (n === null) {
      this.#eof = true;
      return false;
    }
    if (!this.#firstByte) {
      this.#firstByte = true;
      this.onFirstByte();
    }
    if (this.stats) this.stats.wireBytes += n;
    this.#wire += n;
    if (this.#wire > this.maxWire) throw new FetchFailed("too_large", "page is over the size limit");
    return true;
  }

  /** Takes up to `n` buffered bytes (filling once if none are); empty at end of stream. A view: the caller
   *  copies it before the next fill. */
  async take(n: number): Promise<Uint8Array> {
    const r = this.#in;
    if (r.start === r.end && !(await this.fill())) return new Uint8Array(0);
    const out = r.buf.subarray(r.start, r.start + Math.min(n, r.end - r.start));
    r.start += out.length;
    return out;
  }

  /** The next head, parsed by the lenient rules; undefined on a stream that ends first. */
  async head(): Promise<ResponseHead | undefined> {
    const r = this.#in;
    for (;;) {
      const end = headEnd(r.buf, r.start, r.end);
      if (end >= 0) {
        let head: ResponseHead;
        try {
          head = parseHead(r.buf.subarray(r.start, end), "lenient");
        } catch (err) {
          throw protocolFailure(err);
        }
        r.start = end;
        return head;
      }
      if (r.end - r.start > MAX_HEAD_BYTES) throw new FetchFailed("protocol", "response head too large");
      if (!(await this.fill(MAX_HEAD_BYTES + 4))) return undefined;
    }
  }

  /** The chunked body's data in what is buffered (views: the caller copies them before the next fill). */
  decode(chunked: ChunkedDecoder): Uint8Array[] {
    const r = this.#in;
    try {
      const { data, used } = chunked.push(r.buf, r.start, r.end);
      r.start += used;
      return data;
    } catch (err) {
      throw protocolFailure(err);
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
