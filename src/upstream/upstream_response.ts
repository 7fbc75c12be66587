/**
 * An upstream answer as the engine reads it (forward.ts, json_answer.ts, retry.ts): the part of Fetch's
 * Response it uses, which a Response from Deno's fetch (UPSTREAM_CLIENT=fetch) is as it is. The wire client
 * builds a WireResponse instead of a Response: Deno 2.9's Response constructor prepares the native head of a
 * response to be served, ≈3 µs per answer that is never served (4.2 µs for a Response with five
 * headers, 0.8 without, docs/performance.md "Upstream answers without a Response").
 */
import { concatBytes } from "../util/bytes.ts";
import { type ChunkSource, chunkStream, streamChunks, wholeChunks } from "../util/chunk_source.ts";
import type { ResponseHead } from "../http1/head.ts";

export interface UpstreamResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
  /** The whole body as UTF-8 (a malformed sequence becomes U+FFFD); once. */
  text(): Promise<string>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The body of `res` chunk by chunk, or null when it has none: a wire answer's own source (no stream made), a
 * Fetch body through a reader. Once, instead of reading `res.body`.
 */
export function bodyChunks(res: UpstreamResponse): ChunkSource | null {
  if (res instanceof WireResponse) return res.chunks();
  return res.body ? streamChunks(res.body) : null;
}

/**
 * A head read off the wire and its body: already there whole (its bytes, or its text as the wire client decodes
 * such a body at once), a source still to read (wire_link.ts), or none. A ReadableStream is made only for a
 * reader that asks for `body`; a body held as text is encoded again only for a reader of its bytes.
 */
export class WireResponse implements UpstreamResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: WireHeaders;
  #body: string | Uint8Array | ChunkSource | ReadableStream<Uint8Array> | null;
  #read = false;

  constructor(head: ResponseHead, body: string | Uint8Array | ChunkSource | null) {
    this.status = head.status;
    this.statusText = head.statusText;
    this.headers = new WireHeaders(head.headers);
    this.#body = body;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array> | null {
    const b = this.#body;
    if (b !== null && !(b instanceof ReadableStream)) this.#body = chunkStream(this.#source(b));
    return this.#body as ReadableStream<Uint8Array> | null;
  }

  /** The body chunk by chunk (bodyChunks above). */
  chunks(): ChunkSource | null {
    const b = this.#body;
    if (b instanceof ReadableStream) return streamChunks(b);
    return b === null ? null : this.#source(b);
  }

  #source(b: string | Uint8Array | ChunkSource): ChunkSource {
    if (typeof b === "string") return wholeChunks(encoder.encode(b));
    return b instanceof Uint8Array ? wholeChunks(b) : b;
  }

  async text(): Promise<string> {
    if (this.#read) throw new TypeError("upstream body already read");
    this.#read = true;
    const b = this.#body;
    if (b === null) return "";
    if (typeof b === "string") return b;
    if (b instanceof Uint8Array) return decoder.decode(b);
    const source = b instanceof ReadableStream ? streamChunks(b) : b;
    const parts: Uint8Array[] = [];
    for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next()) parts.push(chunk);
    return decoder.decode(concatBytes(parts));
  }
}

/** Header fields as parsed (names lower-case): `get` joins repeated fields with ", ", as Fetch's Headers do. */
class WireHeaders {
  constructor(private readonly fields: readonly (readonly [string, string])[]) {}

  get(name: string): string | null {
    const n = name.toLowerCase();
    let value: string | null = null;
    for (const [k, v] of this.fields) if (k === n) value = value === null ? v : `${value}, ${v}`;
    return value;
  }
}
