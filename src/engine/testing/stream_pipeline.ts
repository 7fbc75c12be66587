/** Test doubles for the stream pipeline: a scripted upstream, one-event codecs, and a client harness. */
import type { ErrorObject } from "../../errors/error_object.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IREvent } from "../../ir/events.ts";
import type { Relay, SseFrame, StreamDecoder, StreamEncoder } from "../../protocols/codec.ts";
import type { FrameReader } from "../../protocols/sse_parse.ts";
import {
  type StreamMode,
  type StreamOptions,
  type StreamOutcome,
  StreamPipeline,
} from "../stream_pipeline.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A frame whose data is one internal event (the fake decoder's wire format). */
export const ev = (e: IREvent): SseFrame => ({ data: JSON.stringify(e) });
export const start = ev({ type: "start", id: "msg_1", model: "m" });
export const text = (t: string) => ev({ type: "text_delta", text: t });
export const finish = ev({ type: "finish", reason: "stop" });
export const usage = (input: number, output: number) =>
  ev({ type: "usage", usage: { inputTokens: input, outputTokens: output } });
export const comment: SseFrame = { data: "" };

/** Decodes our one-event frames ("" decodes to nothing); `pending` is what `end()` still yields. */
export function fakeDecoder(pending: IREvent[] = []): StreamDecoder {
  return {
    push: (f) => (f.data === "" ? [] : [JSON.parse(f.data) as IREvent]),
    end: () => pending,
  };
}

export const fakeEncoder: StreamEncoder = {
  push: (e) => (e.type === "text_delta" ? `text:${e.text}\n` : `${e.type}\n`),
  error: (o: ErrorObject) => `error:${o.code}:${o.request_id}\n`,
};

export const translate = (pending: IREvent[] = []): StreamMode => ({
  kind: "translate",
  decoder: fakeDecoder(pending),
  encoder: fakeEncoder,
});

/** Relays frames as `relay:<data>`; taps the same one-event frames. */
export function fakeRelay(endText = ""): Relay {
  let tapped: IREvent[] = [];
  return {
    push(f) {
      if (f.data !== "") tapped.push(JSON.parse(f.data) as IREvent);
      return `relay:${f.data}\n`;
    },
    events() {
      const out = tapped;
      tapped = [];
      return out;
    },
    end: () => endText,
    error: (o) => `relay-error:${o.code}\n`,
  };
}

/**
 * An upstream of batches taken one per read (nothing read ahead, like sseFrameReader). A batch may be a
 * number of ms to wait first, an Error to fail the read with, or "hang" for a read that never answers.
 */
export function upstream(script: (SseFrame[] | number | Error | "hang")[]) {
  const state = { pulls: 0, cancelled: false };
  let wake: (() => void) | undefined;
  const stream = new ReadableStream<SseFrame[]>({
    async pull(c) {
      state.pulls++;
      for (;;) {
        const step = script.shift();
        if (step === undefined) return c.close();
        if (typeof step === "number") await sleep(step);
        else if (step === "hang") await new Promise<void>((r) => (wake = r));
        else if (step instanceof Error) throw step;
        else return c.enqueue(step);
      }
    },
    cancel() {
      state.cancelled = true;
      wake?.();
    },
  }, { highWaterMark: 0 });
  const reader = stream.getReader();
  const batches: FrameReader = {
    read: async () => {
      const r = await reader.read();
      return r.done ? undefined : r.value;
    },
    cancel: (reason) => reader.cancel(reason),
  };
  return { batches, state };
}

/** The test pipeline's options (translate mode, long timers, nothing reported) with `over`'s. */
export function pipelineOptions(over: Partial<StreamOptions> = {}): StreamOptions {
  return {
    mode: translate(),
    requestId: "req_t",
    heartbeatMs: 60_000,
    idleTimeoutMs: 60_000,
    upstreamError: () => new GatewayError("upstream_unavailable"),
    inspect: () => undefined,
    abortUpstream: () => {},
    onDone: () => {},
    ...over,
  };
}

export interface Harness {
  client: ReadableStreamDefaultReader<Uint8Array>;
  outcomes: StreamOutcome[];
  aborts: () => number;
  cutNow: () => StreamOutcome;
  /** Reads one client chunk as text (undefined at the end). */
  next(): Promise<string | undefined>;
  /** Reads every remaining chunk. */
  rest(): Promise<string[]>;
  /** The pipeline's check before the 200 (StreamPipeline.start). */
  start(): Promise<GatewayError | undefined>;
}

export function pipeline(
  batches: FrameReader,
  over: Partial<StreamOptions> = {},
): Harness {
  const outcomes: StreamOutcome[] = [];
  let aborts = 0;
  let cutNow: (() => StreamOutcome) | undefined;
  const pipe = new StreamPipeline(pipelineOptions({
    batches,
    abortUpstream: () => aborts++,
    onDone: (o) => outcomes.push(o),
    onOpen: (c) => (cutNow = c),
    ...over,
  }));
  const client = pipe.readable.getReader();
  const dec = new TextDecoder();
  const next = async () => {
    const r = await client.read();
    return r.done ? undefined : dec.decode(r.value);
  };
  return {
    client,
    outcomes,
    aborts: () => aborts,
    cutNow: () => cutNow!(),
    next,
    start: () => pipe.start(),
    async rest() {
      const out: string[] = [];
      for (let c = await next(); c !== undefined; c = await next()) out.push(c);
      return out;
    },
  };
}
