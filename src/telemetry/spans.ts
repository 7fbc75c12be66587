/**
 * OpenTelemetry spans of one request's stages (auth, rules, reserve, upstream first byte, stream,
 * settle), through Deno's built-in OpenTelemetry: with `OTEL_DENO=true` Deno registers its tracer provider
 * and exports over OTLP as the standard `OTEL_*` variables say (docs/operator-guide.md "Traces"). Without it nothing is
 * created at all, so the hot path pays one branch. Spans carry the request id, surface, family and model —
 * never a key or content. Times are taken by the caller on the monotonic clock and turned into epoch times
 * here, so a stage's span can be opened after the fact from two marks.
 */
import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

/** Whether Deno exports telemetry (read once; the gateway runs with --allow-env). */
export const TRACING = Deno.env.get("OTEL_DENO") === "true";

const tracer = trace.getTracer("gateway");

/** Epoch milliseconds of a `performance.now()` mark (what OpenTelemetry takes as a time input). */
const epoch = (mark: number) => performance.timeOrigin + mark;

export class RequestSpans {
  readonly #root: Span;

  constructor(requestId: string, surface: string, route: string | undefined, startedAt: number) {
    this.#root = tracer.startSpan("gateway.request", {
      startTime: epoch(startedAt),
      attributes: {
        "gateway.request_id": requestId,
        "gateway.surface": surface,
        ...(route ? { "http.route": route } : {}),
      },
    }, context.active());
  }

  /** A finished stage between two marks, as a child of the request. */
  stage(name: string, from: number, to: number): void {
    const parent = trace.setSpan(context.active(), this.#root);
    tracer.startSpan(`gateway.${name}`, { startTime: epoch(from) }, parent).end(epoch(to));
  }

  /** The request is over: what it was for and how it ended. */
  end(at: number, status: number, code: string | undefined, family?: string, model?: string): void {
    if (family) this.#root.setAttribute("gateway.family", family);
    if (model) this.#root.setAttribute("gateway.model", model);
    this.#root.setAttribute("http.response.status_code", status);
    if (code) {
      this.#root.setAttribute("gateway.error_code", code);
      this.#root.setStatus({ code: SpanStatusCode.ERROR, message: code });
    }
    this.#root.end(epoch(at));
  }
}
