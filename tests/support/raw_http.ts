/**
 * Raw HTTP/1.1 over TCP to a loopback gateway (requests `fetch` cannot send: broken framing, huge or
 * unfinished heads, bytes outside HTTP's whitespace), and the §7.1 error envelope check the hostile-input
 * tests share. Every read is bounded in time, every socket is loopback.
 */
import assert from "node:assert/strict";
import type { TestGateway } from "./harness.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RawResult {
  /** Parsed response, when a complete one arrived. */
  status?: number;
  headers?: Headers;
  body?: string;
  /** HTTP version of the answer's status line ("1.0" or "1.1"), when a complete one arrived. */
  version?: string;
  /** Bytes received before the connection ended or the read stopped. */
  received: number;
  /** The reads (each non-empty) those bytes took. */
  reads: number;
  /** The server closed (EOF or reset) before `timeoutMs`. */
  closed: boolean;
  /** ms from the first write to the end of reading. */
  elapsedMs: number;
}

function parseResponse(
  buf: Uint8Array,
): { version: string; status: number; headers: Headers; body: string } | undefined {
  const end = dec.decode(buf).indexOf("\r\n\r\n"); // the head is ASCII: its offset is in bytes too
  if (end < 0) return undefined;
  const [statusLine, ...lines] = dec.decode(buf.subarray(0, end)).split("\r\n");
  const [, version, status] = /^HTTP\/(1\.[01]) (\d{3})/.exec(statusLine!) ?? [];
  const headers = new Headers();
  for (const l of lines) {
    const i = l.indexOf(":");
    headers.append(l.slice(0, i).trim(), l.slice(i + 1).trim());
  }
  const rest = buf.subarray(end + 4);
  const body = headers.get("transfer-encoding") === "chunked" ? dechunk(rest) : exactly(rest, headers);
  if (body === undefined) return undefined;
  return { version: version!, status: Number(status), headers, body: dec.decode(body) };
}

/** The first Content-Length bytes of `rest`, or undefined while they have not all arrived. */
function exactly(rest: Uint8Array, headers: Headers): Uint8Array | undefined {
  const length = Number(headers.get("content-length") ?? NaN);
  return Number.isFinite(length) && rest.length >= length ? rest.subarray(0, length) : undefined;
}

/** The body of a chunked message (RFC 9112 §7.1: sizes count bytes), or undefined while its last chunk and
 *  the blank line after it have not arrived. */
function dechunk(rest: Uint8Array): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    const eol = rest.indexOf(0x0d, at);
    if (eol < 0 || eol + 1 >= rest.length) return undefined;
    const size = parseInt(dec.decode(rest.subarray(at, eol)), 16);
    if (size === 0) return rest.length >= eol + 4 ? concat(parts) : undefined;
    const end = eol + 2 + size;
    if (rest.length < end + 2) return undefined;
    parts.push(rest.subarray(eol + 2, end));
    at = end + 2;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) out.set(p, off), off += p.length;
  return out;
}

/**
 * Writes `parts` (with `gapMs` between them), then reads until one complete response arrived (or,
 * with `untilClose`, until the server closes), or `timeoutMs` passed. Write errors are ignored (the
 * server may refuse and close while a large head is still being sent).
 */
export async function rawHttp(
  port: number,
  parts: (string | Uint8Array)[],
  opts: { gapMs?: number; timeoutMs?: number; untilClose?: boolean; closeWrite?: boolean } = {},
): Promise<RawResult> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const t0 = performance.now();
  let stop = false;
  const writer = (async () => {
    for (let i = 0; i < parts.length && !stop; i++) {
      if (i > 0 && opts.gapMs) await sleep(opts.gapMs);
      const p = parts[i]!;
      const bytes = typeof p === "string" ? enc.encode(p) : p;
      try {
        for (let off = 0; off < bytes.length && !stop;) off += await conn.write(bytes.subarray(off));
      } catch {
        return;
      }
    }
    if (opts.closeWrite) await conn.closeWrite().catch(() => {});
  })();
  const chunks: Uint8Array[] = [];
  let received = 0;
  let closed = false;
  let parsed: ReturnType<typeof parseResponse>;
  const timer = setTimeout(() => {
    stop = true;
    try {
      conn.close();
    } catch { /* closed */ }
  }, timeoutMs);
  const buf = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) {
        closed = !stop;
        break;
      }
      chunks.push(buf.slice(0, n));
      received += n;
      parsed = parseResponse(concat(chunks));
      if (parsed && !opts.untilClose) break;
    }
  } catch {
    closed = !stop; // reset by the server, not our own timeout close
  }
  const elapsedMs = performance.now() - t0;
  clearTimeout(timer);
  stop = true;
  try {
    conn.close();
  } catch { /* closed */ }
  await writer;
  return { ...parsed, received, reads: chunks.length, closed, elapsedMs };
}

export const head = (lines: string[]) => lines.join("\r\n") + "\r\n\r\n";

/** The §7.1 envelope checks of a gateway-rendered error: status, code, request id, Russian text, shape. */
export function assertEnvelope(
  r: { status?: number; headers?: Headers; body?: string },
  status: number,
  code: string,
  env: "openai" | "anthropic" | "detail" | "auth",
  param?: string | null,
) {
  const where = `${status} ${code}: ${r.status} ${r.body?.slice(0, 400)}`;
  assert.equal(r.status, status, where);
  const json = JSON.parse(r.body ?? "null");
  const rid = r.headers?.get("request-id");
  assert.match(rid ?? "", /^req_[A-Za-z0-9]+$/, where);
  assert.equal(json.request_id, rid, where);
  const err = env === "detail" ? json.detail?.error : json.error;
  assert.ok(err, where);
  assert.equal(err.code, code, where);
  assert.equal(err.request_id, rid, where);
  assert.ok(err.message.endsWith(`[${code} · ${rid}]`), where);
  assert.match(err.message, /[а-яё]/i, where);
  assert.match(err.action, /[а-яё]/i, where);
  if (param !== undefined) assert.equal(err.param, param, where);
  if (env === "anthropic") assert.equal(json.type, "error", where);
  else assert.equal(json.type, undefined, where);
  if (env === "detail") assert.equal(json.error, undefined, where);
  if (env === "openai" || env === "anthropic") assert.equal(json.detail, undefined, where);
  if (env === "auth") assert.deepEqual(json.detail?.error, err, where);
}

/** The port of a test gateway, for raw connections. */
export const portOf = (t: TestGateway) => t.gw.port;
