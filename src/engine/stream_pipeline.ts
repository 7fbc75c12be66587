/**
 * Upstream SSE → client SSE. Pull-based, so the client's reading pace is what pulls the upstream
 * (backpressure end to end: one upstream read is taken per client pull, nothing accumulates), and
 * everything one upstream read carried leaves in one client write.
 * Guarantees §6: the stream ends with the surface's terminal frames or with exactly one error
 * frame — never a silent close. Heartbeat comments keep quiet streams alive; an upstream silent
 * past the idle limit ends with `stream_timeout`. Timing runs on the shared ticker, not a timer per read.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import { errorObject } from "../errors/error_object.ts";
import type { IREvent } from "../ir/events.ts";
import { emptyUsage, type IRUsage, mergeUsage } from "../ir/usage.ts";
import type { Relay, SseFrame, StreamDecoder, StreamEncoder } from "../protocols/codec.ts";
import { SSE_HEARTBEAT } from "../protocols/sse.ts";
import { onTick } from "./ticker.ts";

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
}

export interface StreamOptions {
  /** Parsed upstream frames, one batch per upstream read. */
  batches: ReadableStream<SseFrame[]>;
  mode: StreamMode;
  requestId: string;
  heartbeatMs: number;
  idleTimeoutMs: number;
  /** Maps an in-band upstream error event to the family's error. */
  upstreamError(ev: Extract<IREvent, { type: "error" }>): GatewayError;
  /** The family's look at each event before encoding; returning an error ends the stream with it. */
  inspect(ev: IREvent): GatewayError | undefined;
  /** Abort the upstream request (client gone, timeout, failure). */
  abortUpstream(): void;
  /** Called exactly once when the stream is over, however it ended. */
  onDone(outcome: StreamOutcome): void;
  /** Handed, once, a view of the outcome as if the stream were cancelled now (for drain checkpoints). */
  onOpen?(cutNow: () => StreamOutcome): void;
}

const encoder = new TextEncoder();
const HEARTBEAT_BYTES = encoder.encode(SSE_HEARTBEAT);

export function clientStream(opts: StreamOptions): ReadableStream<Uint8Array> {
  const reader = opts.batches.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let usage: IRUsage | undefined;
  let delivered = 0;
  let events = 0;
  let finished = false;
  let over = false;
  /** When the outstanding upstream read started; undefined while none is (the client is not pulling). */
  let readingSince: number | undefined;
  let lastSent = Date.now();

  const end = (outcome: Omit<StreamOutcome, "usage" | "deliveredChars" | "events" | "finished">) => {
    over = true;
    stopTicking();
    reader.cancel().catch(() => {});
    opts.onDone({ usage, deliveredChars: delivered, events, finished, ...outcome });
  };

  opts.onOpen?.(() => ({ usage, deliveredChars: delivered, events, finished, cancelled: true }));

  const send = (text: string) => {
    if (text) {
      controller.enqueue(encoder.encode(text));
      lastSent = Date.now();
    }
  };

  const fail = (prefix: string, err: GatewayError) => {
    if (over) return;
    const obj = errorObject(err, opts.requestId);
    send(prefix + (opts.mode.kind === "relay" ? opts.mode.relay.error(obj) : opts.mode.encoder.error(obj)));
    controller.close();
    opts.abortUpstream();
    end({ error: err, cancelled: false });
  };

  const stopTicking = onTick(Math.min(opts.heartbeatMs, opts.idleTimeoutMs) / 4, (now) => {
    if (over) return;
    // Idle counts only while we wait on the upstream: a client that stops reading is backpressure, not silence.
    if (readingSince !== undefined && now - readingSince >= opts.idleTimeoutMs) {
      fail("", new GatewayError("stream_timeout"));
    } else if (now - lastSent >= opts.heartbeatMs) {
      controller.enqueue(HEARTBEAT_BYTES);
      lastSent = now;
    }
  });

  /** Follows the events; returns an error that must end the stream, if any. */
  const observe = (ev: IREvent): GatewayError | undefined => {
    events++;
    switch (ev.type) {
      case "usage":
        usage = mergeUsage(usage ?? emptyUsage(), ev.usage);
        break;
      case "text_delta":
      case "reasoning_delta":
        delivered += ev.text.length;
        break;
      case "tool_call_delta":
        delivered += ev.arguments.length;
        break;
      case "finish":
        finished = true;
        break;
      case "error":
        return opts.upstreamError(ev);
    }
    return opts.inspect(ev);
  };

  /** Client text for a batch of upstream frames, or the error that ends the stream. */
  const translate = (batch: SseFrame[]): { text: string; error?: GatewayError } => {
    const mode = opts.mode;
    let text = "";
    for (const frame of batch) {
      if (mode.kind === "relay") {
        const out = mode.relay.push(frame);
        for (const ev of mode.relay.events()) {
          const error = observe(ev);
          if (error) return { text, error };
        }
        text += out;
      } else {
        for (const ev of mode.decoder.push(frame)) {
          const error = observe(ev);
          if (error) return { text, error };
          text += mode.encoder.push(ev);
        }
      }
      if (finished) break; // nothing may follow the terminal frames
    }
    return { text };
  };

  const finishText = (): { text: string; error?: GatewayError } => {
    let text = "";
    const events = opts.mode.kind === "relay"
      ? ((text = opts.mode.relay.end()), opts.mode.relay.events())
      : opts.mode.decoder.end();
    for (const ev of events) {
      const error = observe(ev);
      if (error) return { text: "", error };
      if (opts.mode.kind === "translate") text += opts.mode.encoder.push(ev);
    }
    return finished ? { text } : { text, error: new GatewayError("stream_service_error") };
  };

  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull() {
      try {
        for (;;) {
          readingSince = Date.now();
          const res = await reader.read();
          readingSince = undefined;
          if (over) return;
          const { text, error } = res.done ? finishText() : translate(res.value);
          if (error) return fail(text, error);
          if (res.done || finished) {
            // The terminal frames are out: close, whatever the upstream still sends.
            send(text);
            controller.close();
            end({ cancelled: false });
            return;
          }
          if (text) return send(text);
        }
      } catch (err) {
        // Upstream cut, malformed frame or a codec bug: one error frame, never a silent close.
        if (!(err instanceof GatewayError)) console.error(`stream ${opts.requestId} failed: ${err}`);
        fail("", err instanceof GatewayError ? err : new GatewayError("stream_service_error"));
      }
    },
    cancel() {
      if (over) return;
      opts.abortUpstream();
      end({ cancelled: true });
    },
  }, { highWaterMark: 0 });
}
