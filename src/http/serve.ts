/**
 * The listening socket of the gateway, with connection deadlines that `Deno.serve` does not have.
 *
 * Deno 2.9's HTTP/1.1 server keeps a connection open for as long as the client likes: a client that
 * never finishes its request head (slowloris), or an idle keep-alive connection, is never closed.
 * `Deno.serve` has no option for it, so the gateway accepts TCP itself (`Deno.listen`) and hands every
 * connection to Deno's own HTTP server with `serveHttpOnConnection` — the per-connection entry point
 * behind `Deno.serve` (exposed as `Deno[Deno.internal]`, not a public API). The HTTP parsing, the
 * raw HTTP/1.1 fast path and h2c stay Deno's; only the bookkeeping below is ours:
 *
 * - a new connection must complete its first request head within `headerTimeoutMs`;
 * - a connection with no request in progress (between keep-alive requests, or dribbling its next
 *   head) is closed after `idleTimeoutMs`;
 * - a connection with a request in progress (reading the body, streaming the answer) is never cut
 *   by these bounds.
 *
 * "In progress" ends when `info.completed` settles (the response fully written, or the client gone).
 * Closing uses the per-connection server's graceful `shutdown()`: with no request in flight it
 * closes the socket at once. (Aborting its signal instead would throw an uncaught BadResource once
 * the connection is already gone.)
 *
 * When the internal entry point is missing (another Deno version), the gateway falls back to plain
 * `Deno.serve` without the deadlines and says so once in the log; `tests/api/hostile_http_test.ts`
 * checks that the deadlines are active on the Deno the project pins.
 */
import { EntryList } from "../util/entry_list.ts";
import type { Logger } from "../util/log.ts";

/** Per-connection facts the handler needs (see server.ts: the missing-Host check, the address limit). */
export interface ConnMeta {
  /**
   * The authority Deno writes into `req.url` when a request names none (no Host header,
   * origin-form target): `localhost:<port>` on loopback/wildcard addresses, `<ip>:<port>` otherwise.
   */
  fallbackHost: string;
  /** The peer's IP address as the socket reports it (a proxy's, when one is in front; see client_address.ts). */
  peer: string;
}

export type GatewayHandler = (req: Request, conn: ConnMeta, completed: Promise<void>) => Promise<Response>;

export interface ConnectionBounds {
  /** A new connection must deliver a complete request head within this many ms. */
  headerTimeoutMs: number;
  /** A connection without a request in progress is closed after this many ms. */
  idleTimeoutMs: number;
}

/** Production bounds (docs/api.md "HTTP level"). */
export const DEFAULT_CONNECTION_BOUNDS: Readonly<ConnectionBounds> = Object.freeze({
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 75_000,
});

export interface ServeOptions extends Partial<ConnectionBounds> {
  hostname: string;
  port: number;
  /** Plain `Deno.serve`, no deadlines: HTTP_CONNECTION_DEADLINES=off (a proxy in front bounds connections),
   *  and what a Deno without the entry point gets. */
  plain?: boolean;
  /** Several processes listen on the same port (WORKERS, Linux SO_REUSEPORT): the kernel spreads connections. */
  reusePort?: boolean;
  /** Where a failed accept, a handler that threw past the gateway's own catch, and the fallback go. */
  log: Logger;
}

export interface GatewayServer {
  addr: Deno.NetAddr;
  /** True when the connection deadlines are enforced (the per-connection entry point exists). */
  deadlines: boolean;
  /** Open connections right now (per-connection mode only; 0 otherwise). */
  readonly connections: number;
  /** Stops accepting, lets in-flight requests finish, closes every connection. */
  shutdown(): Promise<void>;
}

interface ConnServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** An open connection, as the sweep reads it. */
interface Open {
  server: ConnServer;
  /** Requests in progress: while any is, the connection is never closed by the bounds. */
  inflight: number;
  /** When its current wait began (Date.now): the connection opened, or its last request ended. */
  since: number;
  /** How long that wait may last: the header bound before the first request, then the idle bound. */
  bound: number;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal | undefined,
  handler: (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => ConnServer;

function serveOnConnectionEntry(): ServeOnConnection | undefined {
  try {
    const internalKey = (Deno as unknown as { internal?: symbol }).internal;
    if (internalKey === undefined) return undefined;
    const internal = (Deno as unknown as Record<symbol, Record<string, unknown> | undefined>)[internalKey];
    const fn = internal?.serveHttpOnConnection;
    return typeof fn === "function" ? fn as ServeOnConnection : undefined;
  } catch {
    return undefined;
  }
}

/** Whether this Deno exposes the per-connection entry point the deadlines need. */
export function connectionDeadlinesSupported(): boolean {
  return serveOnConnectionEntry() !== undefined;
}

/** Rust's is_loopback() || is_unspecified() (an IPv4-mapped IPv6 address is neither there). */
const isLoopbackOrAny = (host: string) =>
  host === "0.0.0.0" || host === "::" || host === "::1" || /^127\./.test(host);

/** Deno's fallback authority for a local address (ext/http request_properties.rs, req_host_from_addr). */
export function fallbackHostFor(addr: Deno.NetAddr): string {
  const local = isLoopbackOrAny(addr.hostname);
  const ip = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  if (addr.port === 80) return local ? "localhost" : ip;
  return local ? `localhost:${addr.port}` : `${ip}:${addr.port}`;
}

const errorText = (err: unknown) => err instanceof Error ? err.stack ?? err.message : String(err);

export function serveGateway(opts: ServeOptions, handler: GatewayHandler): GatewayServer {
  const { log } = opts;
  const internalError = (error: unknown) => {
    log.error("HTTP handler failed", { error: errorText(error) });
    return new Response("internal error", { status: 500 });
  };
  const serveOn = opts.plain ? undefined : serveOnConnectionEntry();
  if (!serveOn) {
    if (!opts.plain) {
      log.warn(
        "this Deno has no per-connection HTTP entry point; header and idle connection deadlines are OFF",
      );
    }
    let fallbackHost = "";
    const server = Deno.serve(
      {
        hostname: opts.hostname,
        port: opts.port,
        reusePort: opts.reusePort ?? false,
        onListen: () => {},
        onError: internalError,
      },
      (req, info) => handler(req, { fallbackHost, peer: info.remoteAddr.hostname }, info.completed),
    );
    const addr = server.addr as Deno.NetAddr;
    fallbackHost = fallbackHostFor(addr);
    return { addr, deadlines: false, connections: 0, shutdown: () => server.shutdown() };
  }

  const headerTimeoutMs = opts.headerTimeoutMs ?? DEFAULT_CONNECTION_BOUNDS.headerTimeoutMs;
  const idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_CONNECTION_BOUNDS.idleTimeoutMs;
  const listener = Deno.listen({
    hostname: opts.hostname,
    port: opts.port,
    reusePort: opts.reusePort ?? false,
  });
  const live = new EntryList<Open>();
  let closing = false;
  // One sweep for every connection, not a timer each: a timer per connection held ≈1.2 KiB more per idle stream
  // (docs/performance.md "Idle streams: what one holds"). Precision is a tenth of the shorter bound. Its own
  // interval, not the shared ticker (util/ticker.ts): that one runs at the shortest period any user asks, 10 ms,
  // and would walk every open connection that often.
  const sweep = setInterval(() => {
    const now = Date.now();
    live.forEach((c) => {
      if (c.inflight > 0 || now - c.since < c.bound) return;
      c.bound = Infinity; // closed once
      c.server.shutdown().catch(() => {});
    });
  }, Math.max(10, Math.min(1_000, Math.min(headerTimeoutMs, idleTimeoutMs) / 10)));

  const serveConnection = (conn: Deno.Conn) => {
    const meta: ConnMeta = {
      fallbackHost: fallbackHostFor(conn.localAddr as Deno.NetAddr),
      peer: (conn.remoteAddr as Deno.NetAddr).hostname,
    };
    const c = { inflight: 0, since: Date.now(), bound: headerTimeoutMs } as Open;
    const settled = () => {
      if (--c.inflight > 0 || closing) return;
      c.since = Date.now();
      c.bound = idleTimeoutMs;
    };
    c.server = serveOn(
      conn,
      undefined,
      (req, info) => {
        c.inflight++;
        info.completed.then(settled, settled);
        return handler(req, meta, info.completed);
      },
      internalError,
      () => {},
    );
    const entry = live.add(c);
    const done = () => live.remove(entry);
    c.server.finished.then(done, done);
  };

  const acceptLoop = (async () => {
    while (!closing) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (err) {
        if (closing) return;
        // EMFILE and the like: do not spin; the listener stays open.
        log.error("accept failed", { error: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (closing) {
        conn.close();
        return;
      }
      try {
        serveConnection(conn);
      } catch (err) {
        log.error("serving a connection failed", { error: errorText(err) });
        try {
          conn.close();
        } catch { /* already gone */ }
      }
    }
  })();

  return {
    addr: listener.addr as Deno.NetAddr,
    deadlines: true,
    get connections() {
      return live.size;
    },
    async shutdown() {
      closing = true;
      try {
        listener.close();
      } catch { /* already closed */ }
      await acceptLoop;
      clearInterval(sweep);
      const open: Promise<void>[] = [];
      live.forEach((c) => open.push(c.server.shutdown().catch(() => {})));
      await Promise.all(open);
    },
  };
}
