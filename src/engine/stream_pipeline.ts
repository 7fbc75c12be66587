/**
 * Upstream SSE → client SSE. Pull-based, so the client's reading pace is what pulls the upstream
 * (backpressure end to end: one upstream frame is read per client pull, nothing accumulates).
 * Guarantees §6: the stream ends with the surface's terminal frames or with exactly one error
 * frame — never a silent close. Heartbeat comments keep quiet streams alive; an upstream silent
 * past the idle limit ends with `stream_timeout`.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import { errorObject } from "../errors/error_object.ts";
import type { IREvent } from "../ir/events.ts";
import { emptyUsage, type IRUsage, mergeUsage } from "../ir/usage.ts";
import type { Relay, SseFrame, StreamDecoder, StreamEncoder } from "../protocols/codec.ts";
import { SSE_HEARTBEAT } from "../protocols/sse.ts";

export type StreamMode =
  | { kind: "relay"; relay: Relay }
  | { kind: "translate"; decoder: StreamDecoder; encoder: StreamEncoder };

export interface StreamOutcome {
  /** Usage as reported by the upstream (undefined when it never reported any). */
  usage: IRUsage | undefined;
  /** Characters of text, reasoning and tool arguments delivered to the client. */
  deliveredChars: number;
  finished: boolean;
  error?: GatewayError;
  cancelled: boolean;
}

export interface StreamOptions {
  frames: ReadableStream<SseFrame>;
  mode: StreamMode;
  requestId: string;
  heartbeatMs: number;
  idleTimeoutMs: number;
  /** Maps an in-band upstream error event to the family's error. */
  upstreamError(ev: Extract<IREvent, { type: "error" }>): GatewayError;
  /** Family hook run on each event before encoding; returning an error ends the stream with it. */
  inspect?(ev: IREvent): GatewayError | undefined;
  /** Abort the upstream request (client gone, timeout, failure). */
  abortUpstream(): void;
  /** Called exactly once when the stream is over, however it ended. */
  onDone(outcome: StreamOutcome): void;
}

const encoder = new TextEncoder();

export function clientStream(opts: StreamOptions): ReadableStream<Uint8Array> {
  const reader = opts.frames.getReader();
  let pending: Promise<ReadableStreamReadResult<SseFrame>> | undefined;
  let usage: IRUsage | undefined;
  let delivered = 0;
  let finished = false;
  let over = false;
  let lastUpstream = Date.now();

  const done = (outcome: Omit<StreamOutcome, "usage" | "deliveredChars" | "finished">) => {
    if (over) return;
    over = true;
    opts.onDone({ usage, deliveredChars: delivered, finished, ...outcome });
  };

  const errorText = (err: GatewayError): string => {
    const obj = errorObject(err, opts.requestId);
    return opts.mode.kind === "relay" ? opts.mode.relay.error(obj) : opts.mode.encoder.error(obj);
  };

  /** Follows the events; returns an error that must end the stream, if any. */
  const observe = (ev: IREvent): GatewayError | undefined => {
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
    return opts.inspect?.(ev);
  };

  /** Text for one upstream frame, or the error that ends the stream. */
  const translate = (frame: SseFrame): { text: string; error?: GatewayError } => {
    const mode = opts.mode;
    if (mode.kind === "relay") {
      const text = mode.relay.push(frame);
      for (const ev of mode.relay.events()) {
        const error = observe(ev);
        if (error) return { text: "", error };
      }
      return { text };
    }
    let text = "";
    for (const ev of mode.decoder.push(frame)) {
      const error = observe(ev);
      if (error) return { text, error };
      text += mode.encoder.push(ev);
    }
    return { text };
  };

  const finishText = (): { text: string; error?: GatewayError } => {
    let text = "";
    if (opts.mode.kind === "relay") {
      text = opts.mode.relay.end();
      for (const ev of opts.mode.relay.events()) {
        const error = observe(ev);
        if (error) return { text: "", error };
      }
    } else {
      for (const ev of opts.mode.decoder.end()) {
        const error = observe(ev);
        if (error) return { text, error };
        text += opts.mode.encoder.push(ev);
      }
    }
    return finished ? { text } : { text, error: new GatewayError("stream_service_error") };
  };

  const fail = (
    controller: ReadableStreamDefaultController<Uint8Array>,
    prefix: string,
    err: GatewayError,
  ) => {
    controller.enqueue(encoder.encode(prefix + errorText(err)));
    controller.close();
    opts.abortUpstream();
    reader.cancel().catch(() => {});
    done({ error: err, cancelled: false });
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          if (!pending) {
            pending = reader.read();
            pending.catch(() => {}); // observed below; keeps a late rejection after close from going unhandled
          }
          const waitMs = Math.min(
            opts.heartbeatMs,
            Math.max(0, lastUpstream + opts.idleTimeoutMs - Date.now()),
          );
          let timer: ReturnType<typeof setTimeout> | undefined;
          const tick = new Promise<"tick">((r) => (timer = setTimeout(() => r("tick"), waitMs)));
          const res = await Promise.race([pending, tick]);
          clearTimeout(timer);
          if (res === "tick") {
            if (Date.now() - lastUpstream >= opts.idleTimeoutMs) {
              return fail(controller, "", new GatewayError("stream_timeout"));
            }
            controller.enqueue(encoder.encode(SSE_HEARTBEAT));
            return;
          }
          pending = undefined;
          lastUpstream = Date.now();
          if (res.done) {
            const { text, error } = finishText();
            if (error) return fail(controller, text, error);
            if (text) controller.enqueue(encoder.encode(text));
            controller.close();
            done({ cancelled: false });
            return;
          }
          const { text, error } = translate(res.value);
          if (error) return fail(controller, text, error);
          if (finished) {
            // The terminal frames are out: nothing may follow them, whatever the upstream still sends.
            if (text) controller.enqueue(encoder.encode(text));
            controller.close();
            reader.cancel().catch(() => {});
            done({ cancelled: false });
            return;
          }
          if (text) {
            controller.enqueue(encoder.encode(text));
            return;
          }
        }
      } catch (err) {
        // Upstream cut, malformed frame or a codec bug: one error frame, never a silent close.
        if (!(err instanceof GatewayError)) console.error(`stream ${opts.requestId} failed: ${err}`);
        fail(controller, "", err instanceof GatewayError ? err : new GatewayError("stream_service_error"));
      }
    },
    cancel() {
      opts.abortUpstream();
      reader.cancel().catch(() => {});
      done({ cancelled: true });
    },
  }, { highWaterMark: 0 });
}
