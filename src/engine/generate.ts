/**
 * One generation request, following the data: auth → decode/validate → catalog → family rules →
 * reserve → upstream call → (JSON | stream pipeline) → settle. Every local rejection happens
 * before the hold; every path after the hold settles exactly once.
 */
import type { App } from "../app.ts";
import { authenticate, checkAnthropicVersion } from "../auth/authenticate.ts";
import { estimateInputTokens, estimateOutputTokens } from "../billing/estimate.ts";
import { type Reservation, reserve } from "../billing/ledger.ts";
import { DEFAULT_RESERVE_OUTPUT_TOKENS } from "../billing/price.ts";
import { findModel, type ModelEntry } from "../catalog/models.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import {
  inStreamError,
  invalidResponse,
  unreachable,
  upstreamStatusError,
} from "../families/upstream_errors.ts";
import { applyFamilyRules } from "../families/rules.ts";
import { resolveFileReferences } from "../files/resolve.ts";
import { readJsonObject } from "../http/body.ts";
import { jsonResponse } from "../http/json.ts";
import type { RouteContext } from "../http/router.ts";
import { emptyUsage, type IRUsage } from "../ir/usage.ts";
import type { EncodeContext, Protocol, ProtocolName } from "../protocols/codec.ts";
import { UpstreamProtocolError } from "../protocols/codec.ts";
import { PROTOCOLS } from "../protocols/registry.ts";
import { sseFrameBatches } from "../protocols/sse_parse.ts";
import { callUpstream } from "../upstream/client.ts";
import { formatUsd } from "../money/usd.ts";
import { clientStream, type StreamOutcome } from "./stream_pipeline.ts";

export interface SurfaceRoute {
  surface: ProtocolName;
  /** `/theta/v1/...` accepts only theta models (§4.1). */
  thetaOnly: boolean;
  endpoint: string;
}

let idCounter = 0;
const idPrefix = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
const newId = (prefix: string) => `${prefix}${idPrefix}${(idCounter++).toString(36)}`;

/** Checks shared by generation and count_tokens: key, version header, body, model. */
export async function admit(app: App, ctx: RouteContext, route: SurfaceRoute) {
  const account = await authenticate(ctx.req.headers, app.accounts);
  if (route.surface === "anthropic") checkAnthropicVersion(ctx.req.headers);
  const body = await readJsonObject(ctx.req, app.config.BODY_LIMIT_BYTES);
  if (body.model === undefined || body.model === null || body.model === "") {
    throw new GatewayError("model_required", { param: "model" });
  }
  if (typeof body.model !== "string") throw new GatewayError("invalid_request", { param: "model" });
  if (route.surface !== "openai_responses" && body.messages === undefined) {
    throw new GatewayError("messages_required", { param: "messages" });
  }
  const model = findModel(body.model);
  if (!model || (route.thetaOnly && model.family !== "theta")) {
    throw new GatewayError("model_not_found", { param: "model" });
  }
  // §2.5: alpha on Chat Completions and Responses also names the request in x-request-id, errors included.
  if (model.family === "alpha" && route.surface !== "anthropic") ctx.headers["x-request-id"] = ctx.requestId;
  if (model.family === "theta" && account.rec.thetaPaused) throw new GatewayError("api_key_paused");
  return { account, body, model };
}

export async function generate(app: App, ctx: RouteContext, route: SurfaceRoute): Promise<Response> {
  const admitted = await admit(app, ctx, route);
  const { account, model } = admitted;
  const ruled = applyFamilyRules(model, route.surface, admitted.body);
  const body = model.family === "alpha"
    ? await resolveFileReferences(app, account, route.surface, ruled)
    : ruled;
  const surface = PROTOCOLS[route.surface];
  const ir = surface.decodeRequest(body);
  const target = app.upstreams[model.family];
  if (!target) throw new GatewayError("upstream_unavailable");
  const upstream = PROTOCOLS[target.protocol];
  const native = upstream.name === surface.name;

  const inputTokens = estimateInputTokens(body);
  const outputBudget = ir.maxOutputTokens ?? Math.min(DEFAULT_RESERVE_OUTPUT_TOKENS, model.maxOutputTokens);
  checkContext(model, inputTokens, ir.maxOutputTokens ?? 0);

  const upstreamOpts = {
    upstreamModel: model.id,
    defaultMaxTokens: Math.min(DEFAULT_RESERVE_OUTPUT_TOKENS, model.maxOutputTokens),
  };
  const upstreamBody = native
    ? surface.prepareNativeRequest(body, upstreamOpts)
    : upstream.encodeRequest(ir, upstreamOpts);

  const reservation = reserve(app.accounts, app.tariff, {
    account,
    model,
    inputTokens,
    outputBudget,
    requestId: ctx.requestId,
    endpoint: ctx.url.pathname,
    stream: ir.stream,
  }, app.now);

  const headers: Record<string, string> = {
    ...ctx.headers,
    "request-id": ctx.requestId,
    "x-gateway-hold-usd": formatUsd(reservation.amount),
  };

  const abort = new AbortController();
  const settleFailed = () =>
    reservation.settle({ usage: emptyUsage(), usageSource: "upstream", status: "error" });
  let res: Response;
  try {
    res = await callUpstream({
      url: target.baseUrl + upstream.upstreamPath,
      protocol: upstream.name,
      key: target.keys[0]!,
      body: upstreamBody,
      abort,
      headersTimeoutMs: app.config.UPSTREAM_HEADERS_TIMEOUT_MS,
    });
  } catch {
    settleFailed();
    throw unreachable(model.family);
  }
  if (!res.ok) {
    const text = await res.text().catch(() => "");
    settleFailed();
    throw upstreamStatusError(
      model.family,
      res.status,
      upstream.parseUpstreamError(res.status, text),
      res.headers.get("retry-after"),
    );
  }

  const encodeCtx: EncodeContext = {
    requestId: ctx.requestId,
    model: model.id,
    now: () => Math.floor(app.now() / 1000),
    newId,
    request: ir,
  };
  if (!ir.stream || !res.body) {
    return await jsonAnswer(res, {
      surface,
      upstream,
      native,
      encodeCtx,
      reservation,
      inputTokens,
      model,
      headers,
      ctx,
    });
  }
  const stream = clientStream({
    batches: sseFrameBatches(res.body),
    mode: native ? { kind: "relay", relay: surface.createRelay(encodeCtx) } : {
      kind: "translate",
      decoder: upstream.createStreamDecoder(),
      encoder: surface.createStreamEncoder(encodeCtx),
    },
    requestId: ctx.requestId,
    heartbeatMs: app.config.STREAM_HEARTBEAT_MS,
    idleTimeoutMs: app.config.STREAM_IDLE_TIMEOUT_MS,
    upstreamError: () => inStreamError(model.family),
    abortUpstream: () => abort.abort(),
    onDone: (o) => settleStream(reservation, o, inputTokens),
  });
  return new Response(stream, {
    status: 200,
    headers: {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

function checkContext(model: ModelEntry, inputTokens: number, outputBudget: number): void {
  const inputLimit = model.maxInputTokens ?? model.contextWindow;
  if (inputTokens > inputLimit || inputTokens + outputBudget > model.contextWindow) {
    throw new GatewayError("context_length_exceeded");
  }
  if (outputBudget > model.maxOutputTokens) {
    throw new GatewayError("invalid_parameter", {
      param: "max_tokens",
      detail: `Предел вывода модели: ${model.maxOutputTokens}.`,
    });
  }
}

async function jsonAnswer(
  res: Response,
  a: {
    surface: Protocol;
    upstream: Protocol;
    native: boolean;
    encodeCtx: EncodeContext;
    reservation: Reservation;
    inputTokens: number;
    model: ModelEntry;
    headers: Record<string, string>;
    ctx: RouteContext;
  },
): Promise<Response> {
  let text: string;
  let json: unknown;
  try {
    text = await res.text();
    json = JSON.parse(text);
  } catch {
    a.reservation.settle({ usage: emptyUsage(), usageSource: "upstream", status: "error" });
    throw invalidResponse(a.model.family);
  }
  try {
    const ir = a.upstream.decodeResponse(json);
    const usage = ir.usage;
    a.reservation.settle(
      usage ? { usage, usageSource: "upstream", status: "ok" } : {
        usage: estimatedUsage(a.inputTokens, ir.content.reduce((n, b) => n + textLength(b), 0)),
        usageSource: "estimated",
        status: "ok",
      },
    );
    if (a.native && (json as Record<string, unknown>).model === a.encodeCtx.model) {
      // Nothing to change: the upstream's bytes go to the client as they came.
      return new Response(text, { headers: { "content-type": "application/json", ...a.headers } });
    }
    const body = a.native
      ? a.surface.relayResponse(json as Record<string, unknown>, a.encodeCtx)
      : a.surface.encodeResponse(ir, a.encodeCtx);
    return jsonResponse(200, body, a.ctx.requestId, a.headers);
  } catch (err) {
    a.reservation.settle({ usage: emptyUsage(), usageSource: "upstream", status: "error" });
    if (err instanceof UpstreamProtocolError) throw invalidResponse(a.model.family);
    throw err;
  }
}

const textLength = (b: { type: string; text?: string; arguments?: string }) =>
  (b.text ?? b.arguments ?? "").length;

function estimatedUsage(inputTokens: number, deliveredChars: number): IRUsage {
  return { ...emptyUsage(), inputTokens, outputTokens: estimateOutputTokens(deliveredChars) };
}

/** §8.1 p.4 and the rule: upstream usage when reported (zero stays zero); else an estimate of what was delivered. */
function settleStream(reservation: Reservation, o: StreamOutcome, inputTokens: number): void {
  const status = o.cancelled ? "cancelled" : o.error ? "error" : "ok";
  if (o.usage) {
    // A stream cut after message_start knows the input but not the output: never charge less than was delivered.
    const delivered = estimateOutputTokens(o.deliveredChars);
    const usage = o.finished
      ? o.usage
      : { ...o.usage, outputTokens: Math.max(o.usage.outputTokens, delivered) };
    reservation.settle({ usage, usageSource: o.finished ? "upstream" : "estimated", status });
  } else {reservation.settle({
      usage: estimatedUsage(inputTokens, o.deliveredChars),
      usageSource: "estimated",
      status,
    });}
}
