/**
 * A counting TCP proxy in front of Postgres for the shared-store bench (bench/shared_stores.ts): the gateway's
 * DATABASE_URL points here, the bytes pass through unchanged, and every round trip its client makes is counted
 * by statement — a Sync or a simple Query (each answered by one ReadyForQuery, whose time is taken), or a
 * Flush after a Describe (postgres.js prepares a statement that way on each connection, before its first run).
 * So a store call of several statements (a lease take is a transaction) counts as the round trips it costs.
 * Protocol 3.0: https://www.postgresql.org/docs/current/protocol-message-formats.html. A connection that asks
 * for TLS cannot be read: it is passed through and counted in `encrypted` only. The proxy runs in a worker
 * thread (pg_wire_worker.ts).
 */

/** Round trips of one statement (its SQL, whitespace collapsed). */
export interface StatementTrips {
  /** Sync or Query round trips: the statement run. */
  runs: number;
  /** Flush round trips: the statement described (prepared) on a connection. */
  describes: number;
  /** Time of each run, from its Sync/Query leaving the client to the ReadyForQuery, ms. */
  ms: number[];
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const [P, B, Q, S, H, Z] = ["P", "B", "Q", "S", "H", "Z"].map((c) => c.charCodeAt(0));
const decoder = new TextDecoder();

/** Splits a byte stream into messages: a type byte (absent before the startup message) and an int32 length
 *  that counts itself. Bodies are kept only when `keep` asks for them. */
export class Framer {
  #head = new Uint8Array(5);
  #got = 0;
  /** Body bytes still to come; -1 while reading a header. */
  #rest = -1;
  #type = 0;
  #body: Uint8Array | undefined;
  #at = 0;

  constructor(
    public typed: boolean,
    private readonly keep: (type: number) => boolean,
    private readonly on: (type: number, body: Uint8Array | undefined) => void,
  ) {}

  push(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#rest < 0) {
        const size = this.typed ? 5 : 4;
        const n = Math.min(size - this.#got, chunk.length - i);
        this.#head.set(chunk.subarray(i, i + n), this.#got);
        this.#got += n;
        i += n;
        if (this.#got < size) return;
        this.#got = 0;
        this.#type = this.typed ? this.#head[0]! : 0;
        this.#rest = new DataView(this.#head.buffer).getInt32(size - 4) - 4;
        this.#body = this.keep(this.#type) ? new Uint8Array(this.#rest) : undefined;
        this.#at = 0;
      }
      const n = Math.min(this.#rest, chunk.length - i);
      this.#body?.set(chunk.subarray(i, i + n), this.#at);
      this.#at += n;
      this.#rest -= n;
      i += n;
      if (this.#rest === 0) {
        this.#rest = -1;
        this.on(this.#type, this.#body);
      }
    }
  }
}

/** The NUL-terminated strings at the start of a message body. */
function cstrings(body: Uint8Array, count: number): string[] {
  const out: string[] = [];
  let at = 0;
  for (let k = 0; k < count; k++) {
    const end = body.indexOf(0, at);
    out.push(decoder.decode(body.subarray(at, end)));
    at = end + 1;
  }
  return out;
}

const normalise = (sql: string) => sql.replace(/\s+/g, " ").trim();

interface Tally {
  run(sql: string): void;
  describe(sql: string): void;
  answered(sql: string, ms: number): void;
}

/** One client connection's protocol state: its prepared statements and the runs awaiting ReadyForQuery. */
class WireConn {
  readonly client: Framer;
  readonly server: Framer;
  #statements = new Map<string, string>();
  #bound = "";
  #parsed = "";
  #waiting: { sql: string; t0: number }[] = [];
  /** The ReadyForQuery that ends the start-up is no answer to a run. */
  #started = false;
  opaque = false;

  constructor(private readonly tally: Tally) {
    this.client = new Framer(
      false,
      (t) => t === 0 || t === P || t === B || t === Q,
      (t, b) => this.#fromClient(t, b!),
    );
    this.server = new Framer(true, () => false, (t) => this.#fromServer(t));
  }

  #fromClient(type: number, body: Uint8Array): void {
    if (type === 0) {
      const code = new DataView(body.buffer).getInt32(0);
      if (code === SSL_REQUEST || code === GSS_REQUEST) this.opaque = true;
      else this.client.typed = true; // the startup message (or a cancel request): typed messages follow
    } else if (type === P) {
      const [name, sql] = cstrings(body, 2);
      this.#parsed = normalise(sql!);
      this.#statements.set(name!, this.#parsed);
    } else if (type === B) {
      this.#bound = this.#statements.get(cstrings(body, 2)[1]!) ?? "(unknown statement)";
    } else if (type === Q) {
      this.#run(normalise(cstrings(body, 1)[0]!));
    } else if (type === S) {
      this.#run(this.#bound);
    } else if (type === H) {
      this.tally.describe(this.#parsed);
    }
  }

  #run(sql: string): void {
    this.tally.run(sql);
    this.#waiting.push({ sql, t0: performance.now() });
  }

  #fromServer(type: number): void {
    if (type !== Z) return;
    if (!this.#started) {
      this.#started = true;
      return;
    }
    const run = this.#waiting.shift();
    if (run) this.tally.answered(run.sql, performance.now() - run.t0);
  }
}

/** The proxy itself. The bench runs it in a worker thread (PgWireCounter), so the load generator's busy event
 *  loop never holds up the bytes it forwards (and so the gateway's commits). */
export class WireProxy {
  #trips = new Map<string, StatementTrips>();
  #encrypted = 0;
  readonly #conns = new Set<Deno.Conn>();

  private constructor(
    private readonly listener: Deno.TcpListener,
    private readonly target: { hostname: string; port: number },
    /** The database URL with the proxy in place of the server. */
    readonly url: string,
  ) {
    void this.#accept();
  }

  /** Listens on a free loopback port in front of the server of `databaseUrl` (postgres://…). */
  static start(databaseUrl: string): WireProxy {
    const u = new URL(databaseUrl);
    const target = { hostname: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 5432) };
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    u.hostname = "127.0.0.1";
    u.port = String(listener.addr.port);
    return new WireProxy(listener, target, u.toString());
  }

  /** Round trips by statement since the start or the last reset. */
  trips(): Map<string, StatementTrips> {
    return new Map([...this.#trips].map(([sql, t]) => [sql, { ...t, ms: [...t.ms] }]));
  }

  /** Connections that asked for TLS (their round trips are not counted). */
  get encrypted(): number {
    return this.#encrypted;
  }

  reset(): void {
    this.#trips.clear();
  }

  close(): void {
    this.listener.close();
    for (const c of this.#conns) c.close();
  }

  #of(sql: string): StatementTrips {
    let t = this.#trips.get(sql);
    if (!t) this.#trips.set(sql, t = { runs: 0, describes: 0, ms: [] });
    return t;
  }

  readonly #tally: Tally = {
    run: (sql) => this.#of(sql).runs++,
    describe: (sql) => this.#of(sql).describes++,
    answered: (sql, ms) => this.#of(sql).ms.push(ms),
  };

  async #accept(): Promise<void> {
    try {
      for await (const client of this.listener) void this.#serve(client);
    } catch { /* listener closed */ }
  }

  async #serve(client: Deno.TcpConn): Promise<void> {
    let server: Deno.TcpConn;
    try {
      server = await Deno.connect(this.target);
    } catch {
      client.close();
      return;
    }
    this.#conns.add(client).add(server);
    const wire = new WireConn(this.#tally);
    let counted = false;
    const see = (framer: Framer) => (chunk: Uint8Array) => {
      if (wire.opaque) {
        if (!counted) this.#encrypted++;
        counted = true;
        return;
      }
      framer.push(chunk);
    };
    await Promise.allSettled([
      pump(client, server, see(wire.client)),
      pump(server, client, see(wire.server)),
    ]);
    for (const c of [client, server]) {
      this.#conns.delete(c);
      try {
        c.close();
      } catch { /* closed already */ }
    }
  }
}

/** What the worker (pg_wire_worker.ts) is asked, and answers. */
export type WireRequest = { start: string } | { reset: true } | { trips: true } | { close: true };
export interface WireAnswer {
  url?: string;
  trips?: Map<string, StatementTrips>;
  encrypted?: number;
}

/** A WireProxy in a worker thread of its own. */
export class PgWireCounter {
  private constructor(private readonly worker: Worker, readonly url: string) {}

  /** Starts the proxy in front of the server of `databaseUrl`; `url` is the database URL through it. */
  static async start(databaseUrl: string): Promise<PgWireCounter> {
    const worker = new Worker(new URL("./pg_wire_worker.ts", import.meta.url), { type: "module" });
    const { url } = await ask(worker, { start: databaseUrl });
    return new PgWireCounter(worker, url!);
  }

  /** Round trips by statement since the start or the last reset, and the connections that asked for TLS
   *  (whose round trips are not counted). */
  async trips(): Promise<{ trips: Map<string, StatementTrips>; encrypted: number }> {
    const a = await ask(this.worker, { trips: true });
    return { trips: a.trips!, encrypted: a.encrypted! };
  }

  async reset(): Promise<void> {
    await ask(this.worker, { reset: true });
  }

  async close(): Promise<void> {
    await ask(this.worker, { close: true });
    this.worker.terminate();
  }
}

/** One request to the worker and its answer (requests are made one at a time). */
function ask(worker: Worker, req: WireRequest): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<WireAnswer>) => resolve(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`pg wire counter: ${e.message}`));
    };
    worker.postMessage(req);
  });
}

/** Copies `src` to `dst`, showing each chunk to `see` before it is forwarded; half-closes `dst` at the end. */
async function pump(src: Deno.Conn, dst: Deno.Conn, see: (chunk: Uint8Array) => void): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await src.read(buf);
      if (n === null) break;
      const chunk = buf.subarray(0, n);
      see(chunk);
      for (let off = 0; off < n;) off += await dst.write(chunk.subarray(off));
    }
  } finally {
    try {
      await dst.closeWrite();
    } catch { /* closed already */ }
  }
}
