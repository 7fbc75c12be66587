/**
 * A usage entry's rows packed into bytes (store format 4, kv_usage_entries.ts): Deno KV stores a Uint8Array as
 * it is, with no V8 serialization, and a row shares most of its fields with the row before it in its entry (the
 * same key, family, model and rates; a request id differing in its last characters; a time a few ms away).
 * A k3 JSON request's row is ≈30 bytes instead of 201 as an array (format 3), which KV's SQLite writer and the
 * group commit pay for per byte (docs/performance.md "The usage row's bytes").
 *
 * Layout: the tag byte PACKED, the number of rows (uint32, little-endian), then each row in turn:
 * - a varint of flags (SAME_* : that field equals the row before's; NO_* : an optional field is absent;
 *   STREAM);
 * - the request id: a varint of the code units it shares with the row before's, then the rest as a string;
 * - the strings not flagged the same, in the order keyId, family, model, endpoint, status, usageSource,
 *   servedModel; each a varint of (byte length << 1 | UTF-16) and its bytes (UTF-8, or UTF-16 when the string
 *   is not well-formed, so every string reads back as it was);
 * - createdAt as the difference from the row before's (0 before the first) when both are safe integers, else
 *   whole; then inputTokens, cachedInputTokens, outputTokens, webSearchRequests (`int`);
 * - the bigints searchFee (when present), reserved, charged, writtenOff, then the four rates unless the same.
 * A number (`int`) is a varint of its zigzag times 2 when it is an integer within ±2^51 (not −0), else the
 * varint 1 and its float64. A bigint is a varint of its zigzag times 2 below 2^52, else the varint 1, a varint
 * of a byte count and that many bytes of its zigzag, least significant first.
 *
 * The layout is the format: a change is a new tag and a new store format version (kv_format.ts).
 */
import type { Family } from "../catalog/models.ts";
import type { UsageRow } from "./types.ts";

/** The first byte of a packed entry. */
export const PACKED = 4;
/** The tag and the row count. */
const HEAD_BYTES = 5;

const SAME_KEY = 1 << 0;
const SAME_FAMILY = 1 << 1;
const SAME_MODEL = 1 << 2;
const SAME_ENDPOINT = 1 << 3;
const SAME_STATUS = 1 << 4;
const SAME_SOURCE = 1 << 5;
const NO_SERVED_MODEL = 1 << 6;
const SAME_SERVED_MODEL = 1 << 7;
const NO_SEARCH_FEE = 1 << 8;
const SAME_RATES = 1 << 9;
const STREAM = 1 << 10;
/** The flags that refer to the row before. */
const SAME_ANY = SAME_KEY | SAME_FAMILY | SAME_MODEL | SAME_ENDPOINT | SAME_STATUS | SAME_SOURCE |
  SAME_SERVED_MODEL | SAME_RATES;
const ALL_FLAGS = SAME_ANY | NO_SERVED_MODEL | NO_SEARCH_FEE | STREAM;

const TWO_51 = 2 ** 51;
const BIG_TWO_52 = 1n << 52n;
const BIG_TWO_50 = 1n << 50n;

const encoder = new TextEncoder();
// A leading U+FEFF is the string's, not a byte order mark to drop.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** Packs rows in order, one entry at a time: `add` a row, `undo` the last one added, `finish` the entry. */
export class RowPacker {
  #buf = new Uint8Array(8192);
  #at = 0;
  #count = 0;
  #prev: UsageRow | undefined;
  #undo = { at: 0, prev: undefined as UsageRow | undefined };

  /** The entry's bytes with `u` added. */
  add(u: UsageRow): number {
    this.#undo.at = this.#at;
    this.#undo.prev = this.#prev;
    const p = this.#prev;
    let flags = u.stream ? STREAM : 0;
    if (p !== undefined) {
      if (u.keyId === p.keyId) flags |= SAME_KEY;
      if (u.family === p.family) flags |= SAME_FAMILY;
      if (u.model === p.model) flags |= SAME_MODEL;
      if (u.endpoint === p.endpoint) flags |= SAME_ENDPOINT;
      if (u.status === p.status) flags |= SAME_STATUS;
      if (u.usageSource === p.usageSource) flags |= SAME_SOURCE;
      if (u.servedModel !== undefined && u.servedModel === p.servedModel) flags |= SAME_SERVED_MODEL;
      const r = u.rates, q = p.rates;
      if (
        r.input === q.input && r.cacheRead === q.cacheRead && r.output === q.output && r.search === q.search
      ) {
        flags |= SAME_RATES;
      }
    }
    if (u.servedModel === undefined) flags |= NO_SERVED_MODEL;
    if (u.searchFee === undefined) flags |= NO_SEARCH_FEE;
    this.#varint(flags);
    const shared = p === undefined ? 0 : sharedPrefix(p.requestId, u.requestId);
    this.#varint(shared);
    this.#string(u.requestId, shared);
    if (!(flags & SAME_KEY)) this.#string(u.keyId, 0);
    if (!(flags & SAME_FAMILY)) this.#string(u.family, 0);
    if (!(flags & SAME_MODEL)) this.#string(u.model, 0);
    if (!(flags & SAME_ENDPOINT)) this.#string(u.endpoint, 0);
    if (!(flags & SAME_STATUS)) this.#string(u.status, 0);
    if (!(flags & SAME_SOURCE)) this.#string(u.usageSource, 0);
    if (!(flags & (NO_SERVED_MODEL | SAME_SERVED_MODEL))) this.#string(u.servedModel!, 0);
    // The difference from the row before's time, or (a float64) the time itself.
    const since = u.createdAt - (p === undefined ? 0 : p.createdAt);
    if (
      Number.isSafeInteger(u.createdAt) && !Object.is(u.createdAt, -0) && Number.isSafeInteger(since) &&
      Math.abs(since) < TWO_51
    ) {
      this.#int(since);
    } else this.#float(u.createdAt);
    this.#int(u.inputTokens);
    this.#int(u.cachedInputTokens);
    this.#int(u.outputTokens);
    this.#int(u.webSearchRequests);
    if (u.searchFee !== undefined) this.#big(u.searchFee);
    this.#big(u.reserved);
    this.#big(u.charged);
    this.#big(u.writtenOff);
    if (!(flags & SAME_RATES)) {
      this.#big(u.rates.input);
      this.#big(u.rates.cacheRead);
      this.#big(u.rates.output);
      this.#big(u.rates.search);
    }
    this.#prev = u;
    this.#count++;
    return HEAD_BYTES + this.#at;
  }

  /** Takes back the row `add` last added. */
  undo(): void {
    this.#at = this.#undo.at;
    this.#prev = this.#undo.prev;
    this.#count--;
  }

  /** The entry's bytes; the packer starts the next entry. */
  finish(): Uint8Array {
    const out = new Uint8Array(HEAD_BYTES + this.#at);
    out[0] = PACKED;
    new DataView(out.buffer).setUint32(1, this.#count, true);
    out.set(this.#buf.subarray(0, this.#at), HEAD_BYTES);
    this.#at = 0;
    this.#count = 0;
    this.#prev = undefined;
    return out;
  }

  #room(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    const grown = new Uint8Array(Math.max(2 * this.#buf.length, this.#at + n));
    grown.set(this.#buf.subarray(0, this.#at));
    this.#buf = grown;
  }

  /** A non-negative integer below 2^53. */
  #varint(n: number): void {
    this.#room(8);
    const buf = this.#buf;
    let at = this.#at;
    while (n >= 128) {
      buf[at++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    buf[at++] = n;
    this.#at = at;
  }

  #int(n: number): void {
    if (Number.isSafeInteger(n) && Math.abs(n) < TWO_51 && !Object.is(n, -0)) {
      this.#varint(n >= 0 ? 4 * n : -4 * n - 2);
    } else this.#float(n);
  }

  #float(n: number): void {
    this.#varint(1);
    this.#room(8);
    f64[0] = n;
    this.#buf.set(f64Bytes, this.#at);
    this.#at += 8;
  }

  #big(b: bigint): void {
    // Most amounts: no bigint arithmetic.
    if (b >= 0n && b < BIG_TWO_50) {
      this.#varint(4 * Number(b));
      return;
    }
    const zz = b >= 0n ? b << 1n : ((-b) << 1n) - 1n;
    if (zz < BIG_TWO_52) {
      this.#varint(2 * Number(zz));
      return;
    }
    const hex = zz.toString(16);
    const n = Math.ceil(hex.length / 2);
    this.#varint(1);
    this.#varint(n);
    this.#room(n);
    for (let i = 0, v = zz; i < n; i++, v >>= 8n) this.#buf[this.#at++] = Number(v & 0xffn);
  }

  /** `s` from code unit `from` on. */
  #string(s: string, from: number): void {
    let i = from;
    while (i < s.length && s.charCodeAt(i) < 128) i++;
    if (i === s.length) {
      const units = s.length - from;
      this.#varint(2 * units);
      this.#room(units);
      const buf = this.#buf;
      let at = this.#at;
      for (let j = from; j < s.length; j++) buf[at++] = s.charCodeAt(j);
      this.#at = at;
    } else if (s.isWellFormed()) {
      const bytes = encoder.encode(s.slice(from));
      this.#varint(2 * bytes.length);
      this.#room(bytes.length);
      this.#buf.set(bytes, this.#at);
      this.#at += bytes.length;
    } else {
      // Not UTF-8 encodable as it is: every code unit in two bytes, little-endian.
      const units = s.length - from;
      this.#varint(4 * units + 1);
      this.#room(2 * units);
      for (let j = from; j < s.length; j++) {
        const c = s.charCodeAt(j);
        this.#buf[this.#at++] = c & 0xff;
        this.#buf[this.#at++] = c >> 8;
      }
    }
  }
}

/** The code units `b` shares with `a` from the start, not ending inside a surrogate pair. */
function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i > 0 && i < b.length && (b.charCodeAt(i - 1) & 0xfc00) === 0xd800) i--;
  return i;
}

/** The rows of a packed entry; a RangeError when the bytes are not one (cut short, or not this layout). */
export function unpackRows(bytes: Uint8Array): UsageRow[] {
  if (bytes.length < HEAD_BYTES || bytes[0] !== PACKED) {
    throw new RangeError("usage entry: not a packed entry");
  }
  const count = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1, true);
  const r = new Reader(bytes);
  const rows: UsageRow[] = [];
  let p: UsageRow | undefined;
  while (rows.length < count) {
    const flags = r.varint();
    if ((flags & ~ALL_FLAGS) !== 0 || (p === undefined && (flags & SAME_ANY) !== 0)) {
      throw new RangeError("usage entry: a row's flags are not this layout's");
    }
    const shared = r.varint();
    if (shared > (p?.requestId.length ?? 0)) {
      throw new RangeError("usage entry: a request id's prefix too long");
    }
    const requestId = (p === undefined ? "" : p.requestId.slice(0, shared)) + r.string();
    const keyId = flags & SAME_KEY ? p!.keyId : r.string();
    const family = (flags & SAME_FAMILY ? p!.family : r.string()) as Family;
    const model = flags & SAME_MODEL ? p!.model : r.string();
    const endpoint = flags & SAME_ENDPOINT ? p!.endpoint : r.string();
    const status = (flags & SAME_STATUS ? p!.status : r.string()) as UsageRow["status"];
    const usageSource = (flags & SAME_SOURCE ? p!.usageSource : r.string()) as UsageRow["usageSource"];
    const servedModel = flags & NO_SERVED_MODEL
      ? undefined
      : flags & SAME_SERVED_MODEL
      ? p!.servedModel
      : r.string();
    const [createdAt, whole] = r.int();
    const row: UsageRow = {
      requestId,
      keyId,
      family,
      model,
      endpoint,
      stream: (flags & STREAM) !== 0,
      status,
      createdAt: whole ? createdAt : (p === undefined ? 0 : p.createdAt) + createdAt,
      inputTokens: r.int()[0],
      cachedInputTokens: r.int()[0],
      outputTokens: r.int()[0],
      webSearchRequests: r.int()[0],
      ...(flags & NO_SEARCH_FEE ? {} : { searchFee: r.big() }),
      reserved: r.big(),
      charged: r.big(),
      writtenOff: r.big(),
      usageSource,
      ...(servedModel === undefined ? {} : { servedModel }),
      rates: flags & SAME_RATES
        ? p!.rates
        : { input: r.big(), cacheRead: r.big(), output: r.big(), search: r.big() },
    };
    rows.push(row);
    p = row;
  }
  if (r.at !== bytes.length) throw new RangeError("usage entry: bytes after its rows");
  return rows;
}

class Reader {
  at = HEAD_BYTES;
  constructor(private readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new RangeError("usage entry: cut short");
    return this.bytes[this.at++]!;
  }

  /** A varint below 2^53. */
  varint(): number {
    let n = 0;
    for (let scale = 1; scale < 2 ** 56; scale *= 128) {
      const b = this.byte();
      n += (b & 127) * scale;
      if (b < 128) {
        if (!Number.isSafeInteger(n)) break;
        return n;
      }
    }
    throw new RangeError("usage entry: a varint too long");
  }

  /** A number, and whether it was written whole (a float64) rather than as an integer. */
  int(): [number, boolean] {
    const v = this.varint();
    if (v === 1) {
      const end = this.at + 8;
      if (end > this.bytes.length) throw new RangeError("usage entry: cut short");
      f64Bytes.set(this.bytes.subarray(this.at, end));
      this.at = end;
      return [f64[0]!, true];
    }
    if (v % 2 !== 0) throw new RangeError("usage entry: not a number");
    const zz = v / 2;
    return [zz % 2 === 0 ? zz / 2 : -(zz + 1) / 2, false];
  }

  big(): bigint {
    const v = this.varint();
    let zz: bigint;
    if (v % 2 === 0) zz = BigInt(v / 2);
    else if (v === 1) {
      const n = this.varint();
      if (n > this.bytes.length - this.at) throw new RangeError("usage entry: cut short");
      zz = 0n;
      for (let i = n - 1; i >= 0; i--) zz = (zz << 8n) | BigInt(this.bytes[this.at + i]!);
      this.at += n;
    } else throw new RangeError("usage entry: not a bigint");
    return zz & 1n ? -((zz + 1n) >> 1n) : zz >> 1n;
  }

  string(): string {
    const head = this.varint();
    const length = Math.floor(head / 2);
    if (length > this.bytes.length - this.at) throw new RangeError("usage entry: cut short");
    const bytes = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    if (head % 2 === 0) {
      try {
        return decoder.decode(bytes);
      } catch {
        throw new RangeError("usage entry: a string not UTF-8");
      }
    }
    if (length % 2 !== 0) throw new RangeError("usage entry: a UTF-16 string of odd length");
    let s = "";
    for (let i = 0; i < length; i += 2) s += String.fromCharCode(bytes[i]! | bytes[i + 1]! << 8);
    return s;
  }
}
