/**
 * Pull-based body streaming shared by the three protocols: batching, `interval`,
 * mid-stream faults, client-abort accounting.
 */

import type { MidFault } from "./directives.ts";

/** Mutable counters and hooks shared by one simulator instance. */
export interface SimState {
  /** Bodies cut short because the client went away (also aborts during `delay`). */
  aborted: number;
  /** Streamed bodies currently open. */
  active: number;
  /** Terminators of open bodies, used by close(). */
  open: Set<() => void>;
  /** Aborted when the simulator shuts down. */
  closing: AbortController;
  /** Id counter and per-instance id stem. */
  seq: number;
  stem: string;
}

export function newState(): SimState {
  return {
    aborted: 0,
    active: 0,
    open: new Set(),
    closing: new AbortController(),
    seq: 0,
    stem: Date.now().toString(36),
  };
}

/** A fresh id such as `msg_sim…`; ids only use [a-zA-Z0-9_]. */
export function newId(state: SimState, prefix: string): string {
  return `${prefix}sim${state.stem}${(++state.seq).toString(36)}`;
}

/** Yielded by protocol generators after every content delta frame. */
export const CHECKPOINT: unique symbol = Symbol("checkpoint");
/** Yielded right before the frames that finish a stream (stop reason, usage, terminal event). */
export const FINAL: unique symbol = Symbol("final");
export type Frame = string | typeof CHECKPOINT | typeof FINAL;

/** A mid-stream fault fires after this many content deltas (or at FINAL if there are fewer). */
export const MID_AFTER = 3;
const BATCH_CHARS = 32 * 1024;
const FAULT: unique symbol = Symbol("fault");
const enc = new TextEncoder();

export interface BodySpec {
  frames: Iterator<Frame>;
  interval: number;
  mid?: MidFault;
  /** In-band error frames for `error_mid`. */
  errorFrames?: () => string;
  headers: Record<string, string>;
  /** content-length announced for `cut_mid` (default: far more than will be sent). */
  declaredLength?: number;
}

const CUT_DECLARED_LENGTH = 1_000_000_000_000;

/** Resolves true if `signal` aborted before `ms` elapsed. */
export function sleep(ms: number, ...signals: AbortSignal[]): Promise<boolean> {
  return new Promise((resolve) => {
    for (const s of signals) if (s.aborted) return resolve(true);
    const done = (aborted: boolean) => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener("abort", onAbort);
      resolve(aborted);
    };
    const onAbort = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
  });
}

/** Cut a frame in the middle of its data line. */
function truncate(frame: string): string {
  const at = frame.indexOf("data: ");
  if (at < 0) return frame.slice(0, Math.max(1, frame.length >> 1));
  const payload = frame.length - at - 6;
  return frame.slice(0, at + 6 + Math.max(1, payload >> 1));
}

/** Drain `frames` into one string if they end within BATCH_CHARS and nothing can interrupt them. */
function drainSmall(spec: BodySpec): { text: string; done: boolean } {
  let text = "";
  if (spec.interval > 0 || spec.mid) return { text, done: false };
  for (;;) {
    const r = spec.frames.next();
    if (r.done) return { text, done: true };
    if (typeof r.value === "string") {
      text += r.value;
      if (text.length >= BATCH_CHARS) return { text, done: false };
    }
  }
}

export function streamBody(state: SimState, spec: BodySpec): Response {
  const { frames, interval, mid } = spec;
  // Fast path: a small uninterrupted answer goes out as one body write.
  const head = drainSmall(spec);
  if (head.done) return new Response(head.text, { status: 200, headers: spec.headers });
  const wake = new AbortController();
  let deltas = 0;
  let fired = false;
  let done = false;
  let first = true;
  let after: "cut" | "stall" | undefined;
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;

  const finish = (byClient: boolean) => {
    if (done) return;
    done = true;
    state.active--;
    state.open.delete(kill);
    if (byClient) state.aborted++;
    wake.abort();
  };
  const kill = () => {
    try {
      ctrl.close(); // quiet; the client sees a stream without its terminal frame
    } catch { /* already closed */ }
    finish(false);
  };
  state.active++;
  state.open.add(kill);

  const next = (): string | null | typeof FAULT => {
    for (;;) {
      const r = frames.next();
      if (r.done) return null;
      const f = r.value;
      if (typeof f === "string") return f;
      if (!mid || fired) continue;
      if (f === CHECKPOINT && ++deltas < MID_AFTER) continue;
      fired = true;
      return FAULT;
    }
  };
  const push = (s: string) => {
    if (s) ctrl.enqueue(enc.encode(s));
  };
  const end = (buf: string) => {
    push(buf);
    ctrl.close();
    finish(false);
  };

  const fault = (buf: string) => {
    switch (mid) {
      case "error_mid":
        return end(buf + (spec.errorFrames?.() ?? ""));
      case "truncated_frame": {
        const f = next();
        return end(buf + (typeof f === "string" ? truncate(f) : 'data: {"trunc'));
      }
      case "cut_mid":
        // The declared content-length is never reached: closing makes the client see a broken body,
        // without Deno logging a stream error. Closed on the next pull, or on the next turn of the event
        // loop if the server asks for nothing more (it may not, once a paced chunk was written).
        after = "cut";
        push(buf);
        setTimeout(() => {
          if (done) return;
          try {
            ctrl.close();
          } catch { /* already closed */ }
          finish(false);
        }, 0);
        return;
      case "stall":
        after = "stall";
        return push(buf);
    }
  };

  const body = new ReadableStream<Uint8Array>({
    start(c) {
      ctrl = c;
    },
    async pull(c) {
      if (done) return;
      if (after === "cut") {
        c.close();
        return finish(false);
      }
      if (after === "stall") {
        await sleep(2 ** 31 - 1, wake.signal);
        return;
      }
      if (interval > 0 && !first) {
        if (await sleep(interval, wake.signal)) return;
      }
      first = false;
      let buf = head.text;
      head.text = "";
      for (;;) {
        const f = next();
        if (f === null) return end(buf);
        if (f === FAULT) return fault(buf);
        buf += f;
        if (interval > 0 || buf.length >= BATCH_CHARS) return push(buf);
      }
    },
    cancel() {
      finish(true);
    },
  }, { highWaterMark: 0 });
  const headers = mid === "cut_mid"
    ? { ...spec.headers, "content-length": String(spec.declaredLength ?? CUT_DECLARED_LENGTH) }
    : spec.headers;
  return new Response(body, { status: 200, headers });
}

/** Yields a JSON body in two halves around FINAL so non-streaming bodies can be faulted too. */
export function* halves(json: string): Generator<Frame> {
  const half = json.length >> 1;
  yield json.slice(0, half);
  yield FINAL;
  yield json.slice(half);
}
