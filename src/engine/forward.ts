/**
 * The upstream exchange of one admitted request: call, map a refusal before the first byte to an
 * ordinary HTTP error, then answer as JSON or as a stream. A path that throws leaves the hold to the request's
 * guard (settlement.ts), which releases it free unless an outcome settled it; the run deadline's rule, the
 * JSON answer and the stream's end settle through it.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { UpstreamCallFacts, UpstreamLease } from "../families/policy.ts";
import type { Exchange } from "./exchange.ts";
import type { IREvent } from "../ir/events.ts";
import { retryAfterSeconds, unavailableError, upstreamStatusError } from "../families/upstream_errors.ts";
import { sseFrameReader } from "../protocols/sse_parse.ts";
import { callUpstream } from "../upstream/client.ts";
import { bodyChunks, type UpstreamResponse } from "../upstream/upstream_response.ts";
import { carryingRequestHeaders } from "../request/answer_headers.ts";
import { formatUsd } from "../money/usd.ts";
import { jsonAnswer } from "./json_answer.ts";
import { runBound, RunDeadline } from "./run_deadline.ts";
import { freeSettlement, streamSettlement } from "./settle.ts";
import { StreamPipeline } from "./stream_pipeline.ts";

export async function forward(x: Exchange): Promise<Response> {
  const codes = x.policy.codes;
  const metrics = x.app.metrics;
  const settlement = x.settlement;
  const reservation = settlement.reservation;
  // The upstream account is the family's to give (one of a pool, after a queue); held until settlement. The
  // closures made here outlive the call (until settlement): none may capture `x` (see `makePipeline`).
  const lease: UpstreamLease = await x.policy.dispatch(x.target, {
    store: x.app.store,
    config: x.app.config,
    keyId: reservation.input.account.rec.id,
    requestId: x.ctx.requestId,
    headers: x.ctx.req.headers,
    body: x.body,
    model: x.model,
    ir: x.ir,
    inputTokens: x.inputTokens,
    outputBudget: x.outputBudget,
    signal: x.abort.signal,
    now: x.app.now,
    queued: (ms) => metrics.thetaQueueWait.observe(ms / 1000),
  });
  reservation.whenSettled(() => lease.release());
  if (lease.headers) answerWith(x, lease.headers);
  if (lease.model) askFor(x, lease.model);
  const stream = x.ir.stream;
  // The bound on the whole run, from the request going out: the family's run limit (gamma/eta, theta: spec
  // §8.4), else on a JSON request the generation limit. A JSON answer's head comes with the whole answer, so
  // there it replaces the headers timeout; a stream's head comes at once and stays bounded by it.
  const bound = runBound(x.policy, x.app.config, stream);
  const run = bound && new RunDeadline(bound, x.abort);
  if (run) reservation.whenSettled(() => run.stop());
  x.ctx.trace.upstreamStarted();
  let call = callFacts(x);
  let prepared: StreamAnswer | undefined;
  let res: UpstreamResponse;
  for (;;) {
    const head = callUpstream({
      url: x.target.baseUrl + x.upstream.upstreamPath,
      protocol: x.upstream.name,
      key: lease.key,
      body: x.upstreamBody,
      abort: x.abort,
      random: x.app.random,
      fetch: x.app.upstreamFetch,
      // A stream's head within the headers timeout; a JSON request has its run bound instead (above).
      ...(stream ? { headersTimeoutMs: x.app.config.UPSTREAM_HEADERS_TIMEOUT_MS } : {}),
      ...(x.native ? { extraHeaders: pick(x.ctx.req.headers, x.upstream.nativeHeaders) } : {}),
    });
    // The stream's pipeline and its 200 are made while the upstream works on the request, off the first byte's
    // path (docs/performance.md "Stream TTFB at c=1"): callUpstream has written the request unless other
    // requests of this loop turn go first (util/yield_turn.ts writeBatch).
    try {
      if (stream) prepared ??= prepareStream(x, call);
    } catch (err) {
      x.abort.abort();
      await head.catch(() => {});
      throw err;
    }
    try {
      res = await head;
    } catch {
      if (run?.expired) throw run.cut(settlement, x.inputTokens);
      // spec §7.2: "not finished in time" is 504; the headers timeout aborts with a TimeoutError reason.
      const timedOut = (x.abort.signal.reason as { name?: string } | undefined)?.name === "TimeoutError";
      throw timedOut ? new GatewayError(codes.timedOut) : unavailableError(codes, undefined);
    }
    settlement.waiting = false; // a head arrived: a failure from here is the upstream's, not the client's
    // A capacity refusal the family answers with another model (theta's fallback), before any byte went out.
    if (res.status !== 429 || !lease.refused) break;
    let next: ReturnType<NonNullable<UpstreamLease["refused"]>>;
    try {
      next = lease.refused(retryAfterSeconds(res.headers.get("retry-after")));
    } catch (err) {
      await res.body?.cancel().catch(() => {});
      throw err;
    }
    if (!next) break;
    await res.body?.cancel().catch(() => {});
    answerWith(x, next.headers);
    askFor(x, next.model);
    call = callFacts(x);
    prepared = undefined; // made again: the answer's headers and the call changed
    settlement.waiting = true; // the call again, with the other model
  }
  x.ctx.trace.upstreamHead();
  if (!res.ok) {
    const text = await res.text().catch(() => "");
    throw upstreamStatusError(
      codes,
      res.status,
      x.upstream.parseUpstreamError(res.status, text),
      res.headers.get("retry-after"),
    );
  }
  if (run?.expired) {
    // The deadline passed just as the head arrived: the body is already aborted.
    await res.body?.cancel().catch(() => {});
    throw run.cut(settlement, x.inputTokens);
  }
  const chunks = stream ? bodyChunks(res) : null;
  if (!chunks) return await jsonAnswer(res, x, call, run);
  // Checked before the 200 goes out: an upstream that does not stream (an HTML 200, a JSON body) is an
  // invalid response like on the JSON path — 502 and nothing charged.
  if (!isEventStream(res.headers.get("content-type"))) {
    await chunks.cancel().catch(() => {});
    throw new GatewayError(codes.invalidResponse);
  }

  // From here the pipeline watches the deadline itself, so it can end the stream with the error frame; it
  // settles the hold when the stream ends, and owns it once the 200 went out (settlement.ts `close`).
  const { pipeline, response } = prepared ?? prepareStream(x, call);
  pipeline.open(sseFrameReader(chunks), run?.handOver());
  settlement.streaming(pipeline);
  // A family that checks the answer's start refuses here, before the 200, as an ordinary HTTP error (free).
  const refusal = await pipeline.start();
  if (refusal) throw refusal;
  x.ctx.trace.endsWithStream();
  x.app.warmShapes.hold(`${x.surface.name}>${x.upstream.name}`, { pipeline, response, res, lease, call });
  return response;
}

function callFacts(x: Exchange): UpstreamCallFacts {
  return { upstreamModel: x.upstreamModel, maxOutputTokens: x.ir.maxOutputTokens };
}

/** A stream's pipeline, not yet open, and the 200 that carries it. */
interface StreamAnswer {
  pipeline: StreamPipeline;
  response: Response;
}

/**
 * The stream's pipeline and its answer, made before the upstream's head: nothing in them is registered or
 * reported until the pipeline opens, so a call that fails drops them. The answer's headers are the request's as
 * they are now; a theta fallback, which changes them, makes it again.
 */
function prepareStream(x: Exchange, call: UpstreamCallFacts): StreamAnswer {
  const pipeline = makePipeline(x, call);
  const response = carryingRequestHeaders(
    new Response(pipeline.readable, {
      status: 200,
      headers: {
        ...x.ctx.headers,
        "request-id": x.ctx.requestId,
        "x-gateway-hold-usd": formatUsd(x.settlement.reservation.amount),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      },
    }),
  );
  return { pipeline, response };
}

/**
 * The stream's pipeline, with callbacks that live as long as the stream. They capture the parts of `x` they
 * use, never `x` itself: V8 keeps the variables a function's closures use in one context they all share, and
 * `x` holds the request's body and IR — a prompt of 32 KB kept ~230 KB per idle stream alive
 * (docs/performance.md "Idle streams: what one holds"). The encode context carries the request's parameters
 * only.
 */
function makePipeline(x: Exchange, call: UpstreamCallFacts): StreamPipeline {
  const { settlement, inputTokens, policy, answer, abort } = x;
  const reservation = settlement.reservation;
  const { trace, requestId } = x.ctx;
  const log = x.app.log;
  const codes = policy.codes;
  return new StreamPipeline({
    mode: x.native ? { kind: "relay", relay: x.surface.createRelay(x.encodeCtx) } : {
      kind: "translate",
      decoder: x.upstream.createStreamDecoder(),
      encoder: x.surface.createStreamEncoder(x.encodeCtx),
    },
    requestId,
    heartbeatMs: x.app.config.STREAM_HEARTBEAT_MS,
    idleTimeoutMs: x.app.config.STREAM_IDLE_TIMEOUT_MS,
    upstreamError: () => new GatewayError(codes.inStream),
    inspect: (ev) => {
      answer?.event(ev); // how the answer ends, for the family's request session
      return policy.inspect(ev, call);
    },
    ...(policy.beforeContent ? { beforeContent: (ev: IREvent) => policy.beforeContent!(ev, call) } : {}),
    ...(codes.streamBroken ? { brokenError: () => new GatewayError(codes.streamBroken!) } : {}),
    cut: x.app.inflight,
    abortUpstream: () => abort.abort(),
    onFault: (err) =>
      log.warn("stream failed", {
        request_id: requestId,
        error: err instanceof Error ? `${err.name}: ${err.message}` : typeof err,
      }),
    onDone: (o) => {
      const settled = settlement.settle(
        streamSettlement(reservation, o, inputTokens) ?? freeSettlement(o.cancelled),
      );
      // A refusal ends as the HTTP error it becomes; so does a stream the exchange abandoned before its 200
      // (the guard released the hold already).
      if (settled && !o.refused) trace.end(200, o.error?.code);
    },
    onOpen: (cutNow) => reservation.trackOpen(() => streamSettlement(reservation, cutNow(), inputTokens)),
  });
}

function isEventStream(contentType: string | null): boolean {
  return contentType !== null && contentType.split(";")[0]!.trim().toLowerCase() === "text/event-stream";
}

/** The named client headers that are present (lower-case names). */
function pick(headers: Headers, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = headers.get(n);
    if (v !== null) out[n] = v;
  }
  return out;
}

/** Headers the family adds to the answer, error or not: the request's one header bag. */
function answerWith(x: Exchange, headers: Record<string, string>): void {
  Object.assign(x.ctx.headers, headers);
}

/** The upstream body asks for `model` instead (theta's fallback): the answer still names the requested one. */
function askFor(x: Exchange, model: string): void {
  const body = x.upstreamBody instanceof Uint8Array
    ? JSON.parse(new TextDecoder().decode(x.upstreamBody)) as Record<string, unknown>
    : x.upstreamBody;
  x.upstreamBody = { ...body, model };
  x.upstreamModel = model;
  x.settlement.reservation.servedBy(model);
}
