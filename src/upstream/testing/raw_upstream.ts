/** A raw HTTP/1.1 upstream on loopback for the wire client's tests (wire_client_test.ts, wire_pool_test.ts). */
import type { UpstreamResponse } from "../upstream_response.ts";
import type { WireClient } from "../wire_client.ts";

export const enc = new TextEncoder();
export const dec = new TextDecoder();

/** What `answer` gets: the request, and the connection to write the answer on. */
export interface Answer {
  write(s: string | Uint8Array): Promise<void>;
  close(): void;
  /** Ends the upstream's sending side only (a half-close: FIN, reads go on). */
  closeWrite(): void;
  /** The request's number, counted over all connections from 1. */
  n: number;
  /** The request's number on its connection, from 1. */
  k: number;
  /** The request body as text. */
  body: string;
}

interface Seen {
  /** Connections accepted. */
  accepts: number;
  /** Each request's head and body, as received. */
  requests: { head: string; body: string; conn: number }[];
}

/**
 * A raw HTTP/1.1 upstream on loopback: reads each request (head and Content-Length body) and hands it to
 * `answer`, which writes whatever bytes the test wants (or closes, or never answers).
 */
export function rawUpstream(
  answer: (w: Answer) => Promise<void>,
  listen: () => Deno.Listener = () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
) {
  const listener = listen();
  const seen: Seen = { accepts: 0, requests: [] };
  const conns = new Set<Deno.Conn>();
  const serve = async (conn: Deno.Conn, id: number) => {
    let pending = new Uint8Array(0);
    let k = 0;
    const more = async () => {
      const buf = new Uint8Array(64 * 1024);
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return false;
      const next = new Uint8Array(pending.length + n);
      next.set(pending);
      next.set(buf.subarray(0, n), pending.length);
      pending = next;
      return true;
    };
    for (;;) {
      let end = -1;
      while ((end = dec.decode(pending).indexOf("\r\n\r\n")) < 0) {
        if (!(await more())) return conns.delete(conn);
      }
      const head = dec.decode(pending).slice(0, end);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      const headBytes = enc.encode(head).length + 4;
      while (pending.length < headBytes + length) if (!(await more())) return conns.delete(conn);
      const body = dec.decode(pending.subarray(headBytes, headBytes + length));
      pending = pending.slice(headBytes + length);
      seen.requests.push({ head, body, conn: id });
      let closed = false;
      await answer({
        write: async (s) => {
          const b = typeof s === "string" ? enc.encode(s) : s;
          for (let off = 0; off < b.length;) off += await conn.write(b.subarray(off));
        },
        close: () => {
          closed = true;
          try {
            conn.close();
          } catch { /* gone */ }
        },
        closeWrite: () => conn.closeWrite().catch(() => {}),
        n: seen.requests.length,
        k: ++k,
        body,
      }).catch(() => {});
      if (closed) return conns.delete(conn);
    }
  };
  (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      serve(conn, ++seen.accepts);
    }
  })().catch(() => {});
  const addr = listener.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    port: addr.port,
    seen,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* gone */ }
      }
    },
  };
}

export const post = (client: WireClient, url: string, body = "{}", signal = new AbortController().signal) =>
  client.fetch(url + "/v1/chat/completions?x=1", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer up-key" },
    body,
    signal,
  });

/** A body read to its end: its text, and the size of each piece the stream handed over. */
export async function readPieces(res: UpstreamResponse): Promise<{ text: string; sizes: number[] }> {
  const reader = res.body!.getReader();
  let text = "";
  const sizes: number[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += dec.decode(r.value, { stream: true });
    sizes.push(r.value.length);
  }
  return { text: text + dec.decode(), sizes };
}

/** Polls (bounded: about a second) until `probe()` is `want`; returns the last value seen. */
export async function soon<T>(probe: () => T, want: T): Promise<T> {
  for (let i = 0; i < 100 && probe() !== want; i++) await new Promise((r) => setTimeout(r, 10));
  return probe();
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${extra}content-length: ${
    enc.encode(body).length
  }\r\n\r\n${body}`;
