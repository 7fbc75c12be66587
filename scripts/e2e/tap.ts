/**
 * A transparent recording pass-through on 127.0.0.1 in front of the gateway: the clients talk to it exactly as
 * they would to the gateway (same paths, headers and bodies), and it keeps each exchange — the request as the
 * client sent it and the gateway's answer (status, headers, body; stream bodies up to 256 KiB) — so a failing
 * case can show the exact request and response. Nothing is changed on the way but hop-by-hop headers.
 */

export interface Exchange {
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  status: number;
  responseHeaders: Record<string, string>;
  /** The answer's body as text (streams: what passed through, capped); filled in when the body ends. */
  responseBody: string;
  done: boolean;
}

export interface Tap {
  url: string;
  exchanges: Exchange[];
  close(): Promise<void>;
}

const HOP_REQUEST = new Set([
  "host",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "accept-encoding",
]);
const HOP_RESPONSE = new Set([
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "content-encoding",
]);
const STREAM_CAP = 256 * 1024;

function headerRecord(h: Headers, drop: Set<string> = new Set()): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    if (!drop.has(k)) out[k] = v;
  });
  return out;
}

export function startTap(target: string): Promise<Tap> {
  const exchanges: Exchange[] = [];
  const decoder = () => new TextDecoder();
  let resolveUrl!: (url: string) => void;
  const listening = new Promise<string>((r) => resolveUrl = r);
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => resolveUrl(`http://127.0.0.1:${port}`),
  }, async (req) => {
    const url = new URL(req.url);
    const body = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
    const ex: Exchange = {
      method: req.method,
      path: url.pathname + url.search,
      requestHeaders: headerRecord(req.headers),
      requestBody: body ? decoder().decode(body) : "",
      status: 0,
      responseHeaders: {},
      responseBody: "",
      done: false,
    };
    exchanges.push(ex);
    let res: Response;
    try {
      res = await fetch(target + ex.path, {
        method: req.method,
        headers: headerRecord(req.headers, HOP_REQUEST),
        body,
        redirect: "manual",
      });
    } catch (err) {
      ex.status = 502;
      ex.responseBody = `tap: gateway unreachable: ${err}`;
      ex.done = true;
      return new Response(ex.responseBody, { status: 502 });
    }
    ex.status = res.status;
    ex.responseHeaders = headerRecord(res.headers);
    const headers = headerRecord(res.headers, HOP_RESPONSE);
    if (!res.body) {
      ex.done = true;
      return new Response(null, { status: res.status, headers });
    }
    const dec = decoder();
    const copy = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        if (ex.responseBody.length < STREAM_CAP) ex.responseBody += dec.decode(chunk, { stream: true });
        ctl.enqueue(chunk);
      },
      flush() {
        ex.responseBody += dec.decode();
        ex.done = true;
      },
    });
    return new Response(res.body.pipeThrough(copy), { status: res.status, headers });
  });
  return listening.then((url) => ({
    url,
    exchanges,
    async close() {
      await server.shutdown();
    },
  }));
}
