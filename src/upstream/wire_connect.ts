/**
 * Where the wire client's calls go (wire_client.ts): each URL's origin and request target, parsed once, and a
 * new connection to an origin (TCP, or TLS with ALPN http/1.1), abortable while it is being made.
 */
import { closeQuietly, type Conn } from "../http1/reader.ts";

/** The upstream could not be reached (refused, reset, DNS or TLS failure while connecting): nothing was sent. */
export class UpstreamConnectError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(`upstream connect failed: ${message}`, options);
    this.name = "UpstreamConnectError";
  }
}

export interface Origin {
  key: string;
  hostname: string;
  port: number;
  tls: boolean;
  /** The Host header. */
  host: string;
}

export interface Target {
  origin: Origin;
  /** The request target: path and query. */
  target: string;
}

/** URLs whose parsed target is kept. */
const MAX_TARGETS = 64;

/**
 * Each URL's origin and request target, parsed once: the upstream URLs are few (configuration), and `new URL`
 * per request was ≈1% of a JSON request's CPU. Bounded all the same. One Origin object per origin, so the
 * pool can key its connections by it.
 */
export class Targets {
  readonly #origins = new Map<string, Origin>();
  readonly #targets = new Map<string, Target>();

  of(url: string): Target {
    let known = this.#targets.get(url);
    if (!known) {
      if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
      this.#targets.set(url, known = this.#parse(url));
    }
    return known;
  }

  #parse(url: string): Target {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new TypeError(`not an http(s) URL: ${url}`);
    const tls = u.protocol === "https:";
    const key = `${u.protocol}//${u.host}`;
    let origin = this.#origins.get(key);
    if (!origin) {
      const hostname = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
      origin = { key, hostname, port: Number(u.port || (tls ? 443 : 80)), tls, host: u.host };
      this.#origins.set(key, origin);
    }
    return { origin, target: `${u.pathname}${u.search}` };
  }
}

/**
 * A new connection to `origin`. A failure to connect is an UpstreamConnectError; an abort, before or while it is
 * made, rejects with the signal's reason and leaves no connection open.
 */
export async function connectTo(origin: Origin, signal: AbortSignal, caCerts?: string[]): Promise<Conn> {
  let conn: Conn;
  const closeOnAbort = () => closeQuietly(conn);
  try {
    const tcp = await abortable(Deno.connect({ hostname: origin.hostname, port: origin.port }), signal);
    conn = tcp;
    if (signal.aborted) throw signal.reason;
    if (origin.tls) {
      signal.addEventListener("abort", closeOnAbort);
      try {
        const tls = await Deno.startTls(tcp, {
          hostname: origin.hostname,
          alpnProtocols: ["http/1.1"],
          ...(caCerts ? { caCerts } : {}),
        });
        conn = tls;
        await tls.handshake();
      } finally {
        signal.removeEventListener("abort", closeOnAbort);
      }
    }
  } catch (err) {
    if (conn!) closeQuietly(conn);
    if (signal.aborted) throw signal.reason;
    throw new UpstreamConnectError(err instanceof Error ? err.message : String(err), { cause: err });
  }
  if (signal.aborted) {
    closeQuietly(conn);
    throw signal.reason;
  }
  if (!origin.tls) (conn as Deno.TcpConn).setNoDelay(true);
  return conn;
}

/**
 * `connecting`, or the signal's reason as soon as it aborts (Deno.connect itself cannot be aborted: a host that
 * never answers would hold the call past its timeout); a connection made after the abort is closed.
 */
function abortable(connecting: Promise<Deno.TcpConn>, signal: AbortSignal): Promise<Deno.TcpConn> {
  return new Promise((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    signal.addEventListener("abort", aborted);
    connecting.then((conn) => {
      signal.removeEventListener("abort", aborted);
      if (signal.aborted) closeQuietly(conn);
      else resolve(conn);
    }, (err) => {
      signal.removeEventListener("abort", aborted);
      reject(err);
    });
  });
}
