/**
 * Many idle streams held open at once through a proxy (bench/side_by_side.ts), and the proxy's RSS
 * meanwhile. Each stream is one raw HTTP/1.1 connection that sends a streaming chat request and reads only
 * until the first SSE frame arrives, then stays open and silent. Raw sockets, not fetch: the client must stay
 * small next to 10,000 streams, and it never reads past the first frame. Opened in batches, so the server's
 * listen backlog (somaxconn) never overflows.
 */

import { HOLD_MARK } from "./chat_mock.ts";
import { catProc } from "./cpu.ts";
import { memoryOf, type Proc } from "./procs.ts";
import { ms, num } from "./report.ts";
import { chat } from "./scenarios.ts";

const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));

/**
 * The body of an idle stream's request (the mock holds a stream whose prompt carries HOLD_MARK), its prompt
 * padded to about `bytes` when that is more than the one line (a real conversation is kilobytes).
 */
export function holdBody(bytes = 0): string {
  const prompt = `${HOLD_MARK} Keep talking, slowly.`;
  const pad = Math.max(0, bytes - prompt.length);
  return chat(prompt + " lorem ipsum".repeat(Math.ceil(pad / 12)).slice(0, pad), true);
}

export interface HoldOptions {
  /** Base URL of the server (http://127.0.0.1:port). */
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  n: number;
  /** Connections opened at once; the next batch starts when this one has its first frames. */
  batch: number;
  /** The ramp is abandoned after this long (streams still opening count as errors). */
  timeoutMs: number;
}

export interface HoldResult<T> {
  /** Streams that delivered their first frame (all open at once). */
  opened: number;
  errors: number;
  firstError?: string;
  /** ms from the first connection to the last stream's first frame. */
  rampMs: number;
  /** What `whileOpen` returned (undefined when no stream opened). */
  value?: T;
}

/**
 * Opens `n` idle streams (the ramp stops at a batch with an error, or at the timeout), runs `whileOpen` with
 * those that opened, then closes every connection.
 */
export async function holdIdleStreams<T>(
  o: HoldOptions,
  whileOpen: () => Promise<T>,
): Promise<HoldResult<T>> {
  const u = new URL(o.url);
  const enc = new TextEncoder();
  const body = enc.encode(o.body);
  const head = [
    `POST ${o.path} HTTP/1.1`,
    `host: ${u.host}`,
    ...Object.entries(o.headers).map(([k, v]) => `${k}: ${v}`),
    `content-length: ${body.byteLength}`,
    "",
    "",
  ].join("\r\n");
  const request = new Uint8Array([...enc.encode(head), ...body]);
  const conns: Deno.TcpConn[] = [];
  let opened = 0, errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not open within ${o.timeoutMs} ms`)), o.timeoutMs);
  });
  expired.catch(() => {}); // raced below; unobserved when the ramp finishes first

  const openOne = async () => {
    const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
    conns.push(conn);
    for (let off = 0; off < request.byteLength;) off += await conn.write(request.subarray(off));
    const buf = new Uint8Array(4096);
    const dec = new TextDecoder();
    let seen = "";
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) throw new Error(`closed before the first frame: ${seen.slice(0, 300)}`);
      seen += dec.decode(buf.subarray(0, n), { stream: true });
      if (seen.includes("\r\n\r\n") && !seen.startsWith("HTTP/1.1 200")) throw new Error(seen.slice(0, 300));
      if (seen.includes("\ndata: ")) return;
      if (seen.length > 65536) throw new Error(`no SSE frame in the first 64 KiB: ${seen.slice(0, 300)}`);
    }
  };

  try {
    for (let i = 0; i < o.n && errors === 0; i += o.batch) {
      const size = Math.min(o.batch, o.n - i);
      const results = await Promise.allSettled(
        Array.from({ length: size }, () => Promise.race([openOne(), expired])),
      );
      for (const r of results) {
        if (r.status === "fulfilled") opened++;
        else {
          errors++;
          firstError ??= String(r.reason);
        }
      }
    }
    const rampMs = performance.now() - t0;
    return {
      opened,
      errors,
      rampMs,
      ...(firstError ? { firstError } : {}),
      ...(opened > 0 ? { value: await whileOpen() } : {}),
    };
  } finally {
    clearTimeout(timer);
    for (const c of conns) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
  }
}

/** Open file descriptors of a process, and their limit (/proc). */
export async function fdsOf(pid: number): Promise<number> {
  const out = await new Deno.Command("sh", { args: ["-c", `ls /proc/${pid}/fd | wc -l`], stdout: "piped" })
    .output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}
async function fdLimitOf(pid: number): Promise<number> {
  const limits = await catProc([`/proc/${pid}/limits`]);
  return Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? NaN);
}

export interface ProxyHold {
  name: string;
  /** Streams asked for. */
  requested: number;
  /** What fitted under the process's file-descriptor limit (two sockets per proxied stream). */
  attempted: number;
  fdLimit: number;
  opened: number;
  errors: number;
  firstError?: string;
  rampMs: number;
  idleKiB: number;
  /** Highest VmRSS sampled with the streams open (the second after the last one opened). */
  openKiB: number;
  /** Highest VmRSS sampled in one second after they were held idle `settleMs` more, when asked for. */
  settledKiB?: number;
  settleMs?: number;
  fds: { idle: number; open: number; after: number };
}

/** File descriptors a process keeps besides its streams' sockets (listener, epoll, KV files, stdio). */
export const FD_MARGIN = 64;

/**
 * `streams` idle streams through `proxy` (or as many as its descriptor limit allows: a proxied stream is two
 * sockets), a POST of `body` to `path` each; its RSS with them open, and its descriptors 3 s after they close.
 */
export async function holdThrough(
  name: string,
  proxy: Proc,
  req: { path: string; headers: Record<string, string>; body: string },
  o: { streams: number; log: (s: string) => void; settleMs?: number },
): Promise<ProxyHold> {
  await sleep(1000); // start-up garbage settles before "idle"
  const idleFds = await fdsOf(proxy.pid);
  const fdLimit = await fdLimitOf(proxy.pid);
  const attempted = Math.min(o.streams, Math.floor((fdLimit - idleFds - FD_MARGIN) / 2));
  const idle = await memoryOf(proxy.pid);
  o.log(
    `  ${name} pid ${proxy.pid}: ${num(attempted)} idle streams (of ${num(o.streams)}; fd limit ${
      num(fdLimit)
    }), idle RSS ${num(idle.rssKiB / 1024, 1)} MiB`,
  );
  const r = await holdIdleStreams(
    { url: proxy.url, ...req, n: attempted, batch: 500, timeoutMs: 180_000 },
    async () => {
      const peakOver1s = async () => {
        let peak = 0;
        for (let i = 0; i < 10; i++) {
          peak = Math.max(peak, (await memoryOf(proxy.pid)).rssKiB);
          await sleep(100);
        }
        return peak;
      };
      const peak = await peakOver1s();
      const fds = await fdsOf(proxy.pid);
      if (!o.settleMs) return { peak, fds };
      await sleep(o.settleMs);
      return { peak, fds, settled: await peakOver1s() };
    },
  );
  await sleep(3000);
  const hold: ProxyHold = {
    name,
    requested: o.streams,
    attempted,
    fdLimit,
    opened: r.opened,
    errors: r.errors,
    ...(r.firstError ? { firstError: r.firstError } : {}),
    rampMs: r.rampMs,
    idleKiB: idle.rssKiB,
    openKiB: r.value?.peak ?? NaN,
    ...(r.value?.settled !== undefined ? { settledKiB: r.value.settled, settleMs: o.settleMs } : {}),
    fds: { idle: idleFds, open: r.value?.fds ?? NaN, after: await fdsOf(proxy.pid) },
  };
  o.log(
    `    opened ${r.opened}, errors ${r.errors}${r.firstError ? ` (first: ${r.firstError})` : ""}, ramp ${
      ms(r.rampMs)
    }; RSS ${num(hold.openKiB / 1024, 1)} MiB, ${num(perStreamKiB(hold), 1)} KiB per stream${
      hold.settledKiB !== undefined
        ? ` (${num(settledPerStreamKiB(hold)!, 1)} after ${num(o.settleMs! / 1000)} s idle)`
        : ""
    }; fds ${hold.fds.idle} / ${hold.fds.open} / ${hold.fds.after} (idle / open / 3 s after close)`,
  );
  return hold;
}

export const perStreamKiB = (h: ProxyHold) => (h.openKiB - h.idleKiB) / h.opened;
/** The same once the streams were held idle a while (ProxyHold.settledKiB), when measured. */
export const settledPerStreamKiB = (h: ProxyHold) =>
  h.settledKiB === undefined ? undefined : (h.settledKiB - h.idleKiB) / h.opened;
/** RSS with `requested` streams, from the idle RSS and the measured KiB per stream. */
export const projectedMiB = (h: ProxyHold) => (h.idleKiB + perStreamKiB(h) * h.requested) / 1024;
