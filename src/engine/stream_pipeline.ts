/**
 * Upstream SSE → client SSE. Pull-based, so the client's reading pace is what pulls the upstream
 * (backpressure end to end: one upstream read is taken per client pull, nothing accumulates), and
 * everything one upstream read carried leaves in one client write — but for the first: the frame that makes
 * the first client text goes out alone, before the rest of its read is translated.
 * Guarantees spec §6: the stream ends with the surface's terminal frames or with exactly one error
 * frame — never a silent close. Heartbeat comments keep quiet streams alive; an upstream silent
 * past the idle limit ends with `stream_timeout`; a run past the family's deadline ends with its error.
 * Timing runs on the shared ticker, not a timer per read.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import { errorObject } from "../errors/error_object.ts";
import type { IREvent } from "../ir/events.ts";
import { emptyUsage, type IRUsage, mergeUsage } from "../ir/usage.ts";
import type { Relay, SseFrame, StreamDecoder, StreamEncoder } from "../protocols/codec.ts";
import { SSE_HEARTBEAT } from "../protocols/sse.ts";
import type { FrameReader } from "../protocols/sse_parse.ts";
import type { CutWatch, CutWatcher } from "../util/in_flight.ts";
import { onTick, stopTicking, type Ticking } from "../util/ticker.ts";
import { yieldTurn } from "../util/yield_turn.ts";
import type { PipelineDeadline } from "./run_deadline.ts";

export type StreamMode =
  | { kind: "relay"; relay: Relay }
  | { kind: "translate"; decoder: StreamDecoder; encoder: StreamEncoder };

export interface StreamOutcome {
  /** Usage as reported by the upstream (undefined when it never reported any). */
  usage: IRUsage | undefined;
  /** Characters of text, reasoning and tool arguments delivered to the client. */
  deliveredChars: number;
  /** Events decoded from the upstream; 0 means no upstream answer at all (nothing to charge). */
  events: number;
  finished: boolean;
  error?: GatewayError;
  cancelled: boolean;
  /** The family refused the answer before the 200 went out: an ordinary HTTP error, nothing streamed. */
  refused?: true;
  /** The run deadline ended it (`error` is the deadline's): the run is billed even if nothing was decoded. */
  expired?: true;
}

export interface StreamOptions {
  /**
   * Parsed upstream frames, one batch per upstream read (sse_parse.ts sseFrameReader): given here, the pipeline
   * opens at once; else `open` gives them, with the deadline.
   */
  batches?: FrameReader;
  mode: StreamMode;
  requestId: string;
  heartbeatMs: number;
  idleTimeoutMs: number;
  /** Maps an in-band upstream error event to the family's error. */
  upstreamError(ev: Extract<IREvent, { type: "error" }>): GatewayError;
  /** The family's look at each event before encoding; returning an error ends the stream with it. */
  inspect(ev: IREvent): GatewayError | undefined;
  /**
   * The family's check of the upstream's events up to the first content, before the 200 goes out (see
   * `start`): an error becomes an ordinary HTTP error; `"pass"` ends the check at this event. Without it the
   * 200 goes out at once.
   */
  beforeContent?(ev: IREvent): GatewayError | "pass" | undefined;
  /**
   * The upstream broke off (read failure, malformed frame, body ended before the finish): the family's error
   * for it. Default `stream_service_error`.
   */
  brokenError?(): GatewayError;
  /** Told what broke the stream when it was not a GatewayError (a read failure, a codec bug), for the logs. */
  onFault?(err: unknown): void;
  /**
   * The run's deadline (the family's run limit): past it, unless the answer already finished, the upstream is
   * aborted and the stream ends with `error()` — also before the first event (the 200 then carries only it).
   */
  deadline?: PipelineDeadline;
  /**
   * A graceful shutdown's cut (its signal aborted with a GatewayError reason once the grace ran out): the
   * stream ends then with that error frame, after the text already read, and settles (docs/operator-guide.md
   * "Graceful shutdown").
   */
  cut?: CutWatch;
  /** Abort the upstream request (client gone, timeout, failure). */
  abortUpstream(): void;
  /** Called exactly once when the stream is over, however it ended. */
  onDone(outcome: StreamOutcome): void;
  /** Handed, once, a view of the outcome as if the stream were cancelled now (for drain checkpoints). */
  onOpen?(cutNow: () => StreamOutcome): void;
}

const encoder = new TextEncoder();
const HEARTBEAT_BYTES = encoder.encode(SSE_HEARTBEAT);

/** Client text for some upstream input, or the error that must end the stream after that text. */
interface Step {
  text: string;
  error?: GatewayError;
}

/** One upstream read and what it made; `done` when the upstream body ended. */
interface ReadStep extends Step {
  done: boolean;
}

/**
 * One client stream. Stages: `#read` (one upstream batch per client pull) → `#translate` (relay or
 * decode+encode, each event through `#observe`) → one client write; `#endOfUpstream` when the body ends;
 * `#tick` for heartbeats and the idle limit; and the three ways out — `#close` (terminal frames),
 * `#fail` (one error frame) and `#cancel` (client gone) — all through `#done`, which reports once.
 */
export class StreamPipeline {
  /** What the client reads. */
  readonly readable: ReadableStream<Uint8Array>;

  readonly #opts: StreamOptions;
  #reader!: FrameReader;
  #deadline: PipelineDeadline | undefined;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #ticking!: Ticking;
  #usage: IRUsage | undefined;
  #delivered = 0;
  #events = 0;
  #finished = false;
  #over = false;
  /** When the outstanding upstream read started; undefined while none is (the client is not pulling). */
  #readingSince: number | undefined;
  /** What `start` read before the 200 went out, written on the first client pull. */
  #primed: ReadStep | undefined;
  /** The frames of a read after the one that made the first client text, translated on the next pull. */
  #rest: SseFrame[] | undefined;
  /** The before-content check's refusal, if it refused. */
  #refusal: GatewayError | undefined;
  /** Whether an event other than `start` and `usage` was seen (the end of the before-content check). */
  #content = false;
  #lastSent = Date.now();
  /** Whether anything but heartbeats was written to the client. */
  #written = false;
  /** Registered to be told of the shutdown's cut (`StreamOptions.cut`). */
  #watcher: CutWatcher | undefined;

  /**
   * Without `batches` the pipeline is only made: nothing is registered or reported until `open`, and a pipeline
   * never opened is simply dropped. The exchange makes it while the upstream works on the request, off the
   * first byte's path (forward.ts), and opens it with the upstream's body.
   */
  constructor(opts: StreamOptions) {
    this.#opts = opts;
    this.readable = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.#controller = c;
      },
      pull: () => this.#pull(),
      cancel: () => this.#cancel(),
    }, { highWaterMark: 0 });
    if (opts.batches) this.open(opts.batches, opts.deadline);
  }

  /** The upstream's frames and the run's deadline: from here the pipeline runs. Once, before `readable` is read. */
  open(batches: FrameReader, deadline: PipelineDeadline | undefined): this {
    const opts = this.#opts;
    this.#reader = batches;
    this.#deadline = deadline;
    opts.onOpen?.(() => (this.#primeRest(), this.#outcome({ cancelled: true })));
    const untilDeadline = deadline ? deadline.at - Date.now() : Infinity;
    this.#ticking = onTick(
      Math.min(opts.heartbeatMs, opts.idleTimeoutMs, untilDeadline) / 4,
      (now) => this.#tick(now),
    );
    this.#watcher = opts.cut?.onCut(this.#cut);
    return this;
  }

  /**
   * Before the 200 goes out: with a before-content check, reads until the upstream's first content event
   * (anything but `start` and `usage`; a `finish` or an error counts), running the check on each event; a
   * refusal ends the pipeline quietly (reported with `refused`) and is returned, for an ordinary HTTP error.
   * What was read meanwhile is written on the first client pull. Without a check: nothing to do.
   */
  async start(): Promise<GatewayError | undefined> {
    if (!this.#opts.beforeContent) return undefined;
    let text = "";
    try {
      for (;;) {
        const step = await this.#step();
        if (!step) return undefined;
        if (this.#refusal) {
          this.#controller.close();
          this.#opts.abortUpstream();
          this.#done({ error: this.#refusal, cancelled: false, refused: true });
          return this.#refusal;
        }
        text += step.text;
        if (step.error || step.done || this.#content) {
          this.#primed = { ...step, text };
          return undefined;
        }
      }
    } catch (err) {
      this.#primed = { text, error: this.#asStreamError(err), done: false };
      return undefined;
    }
  }

  /**
   * One client pull: upstream reads until something is written or the stream is over. `then`, not async
   * functions, here and in `#step`: a suspended one is an object of its own, held by every idle stream while
   * its read is outstanding (docs/performance.md "Idle streams: what one holds").
   */
  #pull(): Promise<void> | void {
    try {
      if (this.#over) return;
      const primed = this.#primed;
      this.#primed = undefined;
      if (primed) return this.#write(primed);
      return this.#step().then(this.#onStep, this.#failed);
    } catch (err) {
      this.#failed(err);
    }
  }

  /** A step's text written (or the stream ended by it); a step with nothing to write pulls on. */
  #write(step: ReadStep | undefined): Promise<void> | void {
    if (!step) return;
    if (step.error) return this.#fail(step.text, step.error);
    // The terminal frames are out: close, whatever the upstream still sends.
    if (step.done || this.#finished) return this.#close(step.text);
    if (!step.text) return this.#pull();
    const first = !this.#written;
    this.#send(step.text);
    // No next pull before this one ends: the first bytes go out (util/yield_turn.ts) before the rest of their
    // read and of a burst is translated.
    if (first) return yieldTurn();
  }

  #onStep = (step: ReadStep | undefined): Promise<void> | void => {
    try {
      return this.#write(step);
    } catch (err) {
      this.#failed(err);
    }
  };

  #failed = (err: unknown): void => this.#fail("", this.#asStreamError(err));

  /**
   * The rest of a split read (`#translateInto`) translated now, into what waits for the next pull: the deadline,
   * the shutdown's cut and a cancel see the whole read, as without the split (its usage, its finish).
   */
  #primeRest(): void {
    const rest = this.#rest;
    if (!rest || this.#over) return;
    this.#rest = undefined;
    const step = this.#translate(rest);
    const text = (this.#primed?.text ?? "") + step.text;
    this.#primed = step.error ? { text, error: step.error, done: false } : { text, done: false };
  }

  /** One upstream read, translated; undefined when the stream ended meanwhile. Idle time is counted only while
   *  the read is outstanding. */
  #step(): Promise<ReadStep | undefined> {
    const rest = this.#rest;
    if (rest) {
      this.#rest = undefined;
      return Promise.resolve({ ...this.#translate(rest), done: false });
    }
    this.#readingSince = Date.now();
    return this.#reader.read().then((batch) => {
      this.#readingSince = undefined;
      if (this.#over) return undefined;
      return batch ? { ...this.#translate(batch), done: false } : { ...this.#endOfUpstream(), done: true };
    }, (err) => {
      this.#readingSince = undefined;
      throw err;
    });
  }

  /** Upstream cut, malformed frame or a codec bug: one error frame, never a silent close. */
  #asStreamError(err: unknown): GatewayError {
    if (err instanceof GatewayError) return err;
    this.#opts.onFault?.(err);
    return this.#broken();
  }

  #broken(): GatewayError {
    return this.#opts.brokenError?.() ?? new GatewayError("stream_service_error");
  }

  /** Client text for a batch of upstream frames, or the error that ends the stream. */
  #translate(batch: SseFrame[]): Step {
    const out = { text: "" };
    try {
      const error = this.#translateInto(batch, out);
      return error ? { text: out.text, error } : out;
    } catch (err) {
      // A malformed frame or a codec bug: the text of the frames before it still goes out, then the one
      // error frame (spec §6 rule 2).
      return { text: out.text, error: this.#asStreamError(err) };
    }
  }

  /**
   * Appends each frame's client text to `out` as it is made; returns the error that ends the stream, if any.
   * Before the first client write, stops after the frame that made text and keeps the batch's rest for the next
   * step: a burst's first frame reaches the client without waiting for the rest's translation
   * (docs/performance.md "Stream TTFB at c=1").
   */
  #translateInto(batch: SseFrame[], out: { text: string }): GatewayError | undefined {
    const mode = this.#opts.mode;
    for (let i = 0; i < batch.length; i++) {
      const frame = batch[i]!;
      if (mode.kind === "relay") {
        const relayed = mode.relay.push(frame);
        for (const ev of mode.relay.events()) {
          const error = this.#observe(ev);
          if (error) return error;
        }
        out.text += relayed;
      } else {
        for (const ev of mode.decoder.push(frame)) {
          const error = this.#observe(ev);
          if (error) return error;
          out.text += mode.encoder.push(ev);
        }
      }
      if (this.#finished) break; // nothing may follow the terminal frames
      if (!this.#written && out.text && i + 1 < batch.length) {
        this.#rest = batch.slice(i + 1);
        break;
      }
    }
    return undefined;
  }

  /** The upstream body ended: what is still pending, and an error unless the answer was finished. */
  #endOfUpstream(): Step {
    const mode = this.#opts.mode;
    let text = "";
    const events = mode.kind === "relay"
      ? ((text = mode.relay.end()), mode.relay.events())
      : mode.decoder.end();
    for (const ev of events) {
      const error = this.#observe(ev);
      if (error) return { text: "", error };
      if (mode.kind === "translate") text += mode.encoder.push(ev);
    }
    return this.#finished ? { text } : { text, error: this.#broken() };
  }

  /** Follows one event (usage, delivered characters, finish); returns an error that must end the stream. */
  #observe(ev: IREvent): GatewayError | undefined {
    this.#events++;
    if (!this.#content) {
      const verdict = this.#opts.beforeContent?.(ev);
      this.#content = verdict === "pass" || (ev.type !== "start" && ev.type !== "usage");
      if (verdict instanceof GatewayError) {
        this.#refusal = verdict;
        return verdict;
      }
    }
    switch (ev.type) {
      case "usage":
        this.#usage = mergeUsage(this.#usage ?? emptyUsage(), ev.usage);
        break;
      case "text_delta":
      case "reasoning_delta":
        this.#delivered += ev.text.length;
        break;
      case "tool_call_delta":
        this.#delivered += ev.arguments.length;
        break;
      case "finish":
        this.#finished = true;
        break;
      case "error":
        return this.#opts.upstreamError(ev);
    }
    return this.#opts.inspect(ev);
  }

  /**
   * The shared ticker: the run deadline (unless the answer finished), the idle limit while an upstream read
   * is outstanding, else a heartbeat when quiet.
   */
  #tick(now: number): void {
    if (this.#over) return;
    const deadline = this.#deadline;
    if (deadline && now >= deadline.at) {
      this.#primeRest(); // the deadline judges the whole read
      // Not once the answer finished, nor over an ending `start` already read (its own error goes out).
      if (!this.#finished && !this.#primed?.error) {
        // What `start` read and the client has not pulled yet still goes out before the error frame.
        const primed = this.#primed?.text ?? "";
        this.#primed = undefined;
        return this.#fail(primed, deadline.error(), true);
      }
    }
    // Idle counts only while we wait on the upstream: a client that stops reading is backpressure, not silence.
    if (this.#readingSince !== undefined && now - this.#readingSince >= this.#opts.idleTimeoutMs) {
      this.#fail("", new GatewayError("stream_timeout"));
    } else if (now - this.#lastSent >= this.#opts.heartbeatMs) {
      this.#controller.enqueue(HEARTBEAT_BYTES);
      this.#lastSent = now;
    }
  }

  #send(text: string): void {
    if (text) {
      this.#controller.enqueue(encoder.encode(text));
      this.#written = true;
      this.#lastSent = Date.now();
    }
  }

  /** Normal end: the last text (with the terminal frames) and close. */
  #close(text: string): void {
    this.#send(text);
    this.#controller.close();
    this.#done({ cancelled: false });
  }

  /** Failure after the 200: `prefix` (text produced before it), exactly one error frame, close. */
  #fail(prefix: string, err: GatewayError, expired = false): void {
    if (this.#over) return;
    const mode = this.#opts.mode;
    const obj = errorObject(err, this.#opts.requestId);
    this.#send(prefix + (mode.kind === "relay" ? mode.relay.error(obj) : mode.encoder.error(obj)));
    this.#controller.close();
    this.#opts.abortUpstream();
    this.#done(expired ? { error: err, cancelled: false, expired: true } : { error: err, cancelled: false });
  }

  /** The shutdown's cut (`StreamOptions.cut`): what `start` read still goes out, then the cut's error frame. */
  #cut = (): void => {
    if (this.#over) return;
    this.#primeRest();
    const primed = this.#primed;
    this.#primed = undefined;
    if (primed?.error) return this.#fail(primed.text, primed.error);
    if (this.#finished) return this.#close(primed?.text ?? ""); // the whole answer was read before the 200
    const reason = this.#opts.cut?.signal.reason;
    this.#fail(primed?.text ?? "", reason instanceof GatewayError ? reason : this.#broken());
  };

  /**
   * The exchange failed before this stream's 200 went out (settlement.ts `close`): ends it as if the client
   * left — the upstream aborted, reported once.
   */
  abandon(): void {
    this.#cancel();
  }

  /** The client went away. */
  #cancel(): void {
    if (this.#over) return;
    this.#primeRest();
    this.#opts.abortUpstream();
    this.#done({ cancelled: true });
  }

  #done(end: StreamEnd): void {
    this.#over = true;
    stopTicking(this.#ticking);
    if (this.#watcher) this.#opts.cut?.offCut(this.#watcher);
    this.#reader.cancel().catch(() => {});
    this.#opts.onDone(this.#outcome(end));
  }

  #outcome(end: StreamEnd): StreamOutcome {
    return {
      usage: this.#usage,
      deliveredChars: this.#delivered,
      events: this.#events,
      finished: this.#finished,
      ...end,
    };
  }
}

type StreamEnd = Omit<StreamOutcome, "usage" | "deliveredChars" | "events" | "finished">;
