/**
 * One generation request, following the data: auth → decode/validate → catalog → family rules →
 * reserve → upstream call → (JSON | stream pipeline) → settle. Every local rejection happens
 * before the hold; after it, the hold's one guard (settlement.ts) settles it exactly once on every path.
 */
import type { App } from "../app.ts";
import { checkAnthropicVersion } from "../auth/authenticate.ts";
import { estimateInputTokens } from "../billing/estimate.ts";
import { type Reservation, reserve } from "../billing/ledger.ts";
import { DEFAULT_RESERVE_OUTPUT_TOKENS } from "../billing/price.ts";
import { type Family, findModel, type ModelEntry } from "../catalog/models.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { resolveFileReferences } from "../files/resolve.ts";
import { parseJsonObject, readBodyBytes } from "../request/body.ts";
import { ClientWatch } from "../request/client_watch.ts";
import type { KeyContext } from "../request/context.ts";
import { requestParams } from "../ir/request.ts";
import type { Protocol, ProtocolName } from "../protocols/codec.ts";
import { PROTOCOLS } from "../protocols/registry.ts";
import { MAX_BODY_DEPTH, membersWithinDepth } from "../util/json_depth.ts";
import { ObjectEdits, scanObject } from "../util/json_span.ts";
import { AnswerTrace } from "./answer_trace.ts";
import { forward } from "./forward.ts";
import { Settlement } from "./settlement.ts";

export interface SurfaceRoute {
  surface: ProtocolName;
  /** A family-prefixed path accepts only that family's models (spec §4.1). */
  onlyFamily?: Family;
}

/** Checks shared by generation and count_tokens: key, version header, body, model. */
export async function admit(app: App, ctx: KeyContext, route: SurfaceRoute) {
  const account = ctx.account;
  if (route.surface === "anthropic") checkAnthropicVersion(ctx.req.headers);
  const raw = await readBodyBytes(ctx.req, app.config.BODY_LIMIT_BYTES);
  const body = parseJsonObject(raw);
  // Before any walk of the body: the estimate and the codecs then see bounded nesting.
  const members = membersWithinDepth(body, MAX_BODY_DEPTH);
  if (members < 0) {
    throw new GatewayError("invalid_request", {
      detail: `Вложенность JSON глубже ${MAX_BODY_DEPTH} уровней.`,
    });
  }
  if (body.model === undefined || body.model === null || body.model === "") {
    throw new GatewayError("model_required", { param: "model" });
  }
  if (typeof body.model !== "string") throw new GatewayError("invalid_request", { param: "model" });
  if (route.surface !== "openai_responses" && body.messages === undefined) {
    throw new GatewayError("messages_required", { param: "messages" });
  }
  const model = findModel(body.model);
  if (!model || (route.onlyFamily && model.family !== route.onlyFamily)) {
    throw new GatewayError("model_not_found", { param: "model" });
  }
  ctx.trace.family = model.family;
  ctx.trace.model = model.id;
  const policy = app.families[model.family];
  Object.assign(ctx.headers, policy.answerHeaders(route.surface, ctx.requestId));
  policy.admitKey(account);
  return { account, body, raw, members, model, policy };
}

export async function generate(app: App, ctx: KeyContext, route: SurfaceRoute): Promise<Response> {
  const admitted = await admit(app, ctx, route);
  const { account, model, policy } = admitted;
  const ruled = policy.rawBody(model, route.surface, admitted.body);
  const body = policy.translatesFiles
    ? await resolveFileReferences(app, account, route.surface, ruled)
    : ruled;
  const surface = PROTOCOLS[route.surface];
  const ir = surface.decodeRequest(body);
  ctx.trace.stream = ir.stream;
  policy.request(model, ir);
  const target = app.upstreams[model.family];
  if (!target) throw new GatewayError("upstream_unavailable");
  const upstream = PROTOCOLS[target.protocol];
  const prompt = policy.serverPrompt?.(model, app.config);
  // A server prompt goes on a native body only where the codec can put it there; otherwise the route translates.
  const native = upstream.name === surface.name &&
    (prompt === undefined || surface.prefixSystem !== undefined);

  const inputTokens = inputEstimate(body, prompt);
  const outputBudget = ir.maxOutputTokens ?? Math.min(DEFAULT_RESERVE_OUTPUT_TOKENS, model.maxOutputTokens);
  checkContext(model, inputTokens, ir.maxOutputTokens ?? 0, budgetField(route.surface, body));

  const call = policy.upstreamModel?.(model) ?? { model: model.id };
  const upstreamOpts = {
    upstreamModel: call.model,
    defaultMaxTokens: Math.min(DEFAULT_RESERVE_OUTPUT_TOKENS, model.maxOutputTokens),
  };
  const upstreamBody = native
    ? nativeBody(
      surface,
      withFields(surface.prepareNativeRequest(body, upstreamOpts), call.fields),
      body === admitted.body ? admitted : undefined,
      prompt,
    )
    : withFields(
      upstream.encodeRequest(
        prompt === undefined ? ir : { ...ir, system: [prompt, ...ir.system] },
        upstreamOpts,
      ),
      call.fields,
    );

  // The family's check with the store (gamma/eta's tool loops): the last local refusal, before the hold.
  const session = policy.admitRequest
    ? await policy.admitRequest({
      store: app.store,
      config: app.config,
      keyId: account.rec.id,
      key: account.rec,
      requestId: ctx.requestId,
      ir,
      now: app.now,
    })
    : undefined;

  // Past a shutdown's grace nothing new is held (docs/operator-guide.md "Graceful shutdown").
  const cut = app.inflight.signal;
  if (cut.aborted) throw cut.reason;
  // A capacity slot before anything is held (docs/api.md "Errors"), given back when the request settles.
  app.slots.take(isPriority(route.surface, body, call.fields));
  let reservation: Reservation;
  ctx.trace.reserving();
  try {
    reservation = await reserve(
      app.accounts.ledger,
      app.tariff,
      {
        account,
        capCodes: policy.codes.caps,
        model,
        inputTokens,
        outputBudget,
        requestId: ctx.requestId,
        endpoint: ctx.url.pathname,
        stream: ir.stream,
        maxSearches: policy.searchBudget?.(route.surface, body, ir) ?? 0,
      },
      app.now,
      app.log,
    );
  } catch (err) {
    app.slots.release();
    throw err;
  }
  ctx.trace.reserved();
  const abort = new AbortController();
  // A client that leaves before the answer starts aborts the upstream too (a started stream does this
  // through its cancel). Stopped before we respond, so the runtime's end-of-response abort is moot.
  const client = new ClientWatch(ctx.req, () => abort.abort());
  // From here the hold has one owner: the `finally` below closes it, whatever path the exchange took.
  const settlement = new Settlement(reservation, client);
  reservation.whenSettled(() => app.slots.release());
  reservation.whenSettled(app.inflight.enter()); // an open hold: the shutdown waits for it, then cuts it
  const answer = session && new AnswerTrace(reservation, session);
  reservation.whenSettled((row) => ctx.trace.settled(row));

  // The shutdown's cut before the answer started: the upstream call is aborted, and the request answers 503.
  const shutdown = () => abort.abort(cut.reason);
  const watcher = app.inflight.onCut(shutdown);
  let answered = false;
  try {
    const res = await forward({
      app,
      ctx,
      model,
      policy,
      surface,
      upstream,
      native,
      target,
      upstreamBody,
      upstreamModel: call.model,
      ir,
      encodeCtx: {
        requestId: ctx.requestId,
        model: model.id,
        now: () => Math.floor(app.now() / 1000),
        newId: app.newId,
        inputEstimate: inputTokens,
        request: requestParams(ir),
      },
      settlement,
      inputTokens,
      outputBudget,
      body,
      abort,
      ...(answer ? { answer } : {}),
    });
    answered = true;
    return res;
  } catch (err) {
    throw cut.aborted ? cut.reason : err;
  } finally {
    settlement.close(answered);
    client.stop();
    app.inflight.offCut(watcher);
  }
}

/**
 * A request the priority slots are for: the client's `service_tier: "priority"` on Chat Completions or
 * Responses, where a family's rules let it through (alpha's accept auto | priority; gamma/eta's closed list
 * refuses it; Messages has no such tier), or the provider's priority tier the id itself asks for (gamma/eta
 * `-fast`, billed at the fast price).
 */
function isPriority(
  surface: ProtocolName,
  body: Record<string, unknown>,
  fields: Record<string, unknown> | undefined,
): boolean {
  return fields?.service_tier === "priority" || (surface !== "anthropic" && body.service_tier === "priority");
}

/** The upstream body with the fields the model id implies (a changed member: the client's bytes are not reused). */
function withFields(body: Record<string, unknown>, fields: Record<string, unknown> | undefined) {
  return fields ? { ...body, ...fields } : body;
}

/** The input estimate of a request, with the family's server prompt that will go before it. */
export function inputEstimate(body: Record<string, unknown>, prompt: string | undefined): number {
  return estimateInputTokens(body) + (prompt === undefined ? 0 : estimateInputTokens({ prompt }));
}

function checkContext(
  model: ModelEntry,
  inputTokens: number,
  outputBudget: number,
  budgetParam: string,
): void {
  const inputLimit = model.maxInputTokens ?? model.contextWindow;
  if (inputTokens > inputLimit || inputTokens + outputBudget > model.contextWindow) {
    throw new GatewayError("context_length_exceeded", {
      detail: inputTokens > inputLimit
        ? `Оценка входа ${inputTokens} токенов, модель ${model.id} принимает не больше ${inputLimit}.`
        : `Оценка входа ${inputTokens} и ${budgetParam} ${outputBudget} вместе больше окна ${model.contextWindow}.`,
    });
  }
  if (outputBudget > model.maxOutputTokens) {
    throw new GatewayError("invalid_parameter", {
      param: budgetParam,
      detail: `Предел вывода модели ${model.id}: ${model.maxOutputTokens}.`,
    });
  }
}

/** The field that carried the output budget on this surface (spec §4.1; Chat reads max_completion_tokens first). */
function budgetField(surface: ProtocolName, body: Record<string, unknown>): string {
  if (surface === "openai_responses") return "max_output_tokens";
  return surface === "openai_chat" && body.max_completion_tokens !== undefined &&
      body.max_completion_tokens !== null
    ? "max_completion_tokens"
    : "max_tokens";
}

/**
 * The body for a native upstream: the client's own bytes when the body is still the object parsed from
 * them (`original`: no family rule or file translation replaced it), with the top-level members the protocol
 * or the family set (the upstream model, a stream's `stream_options`, the family's fields) put into them in
 * place — no re-serialising of a large prompt. Rules and translation signal a change by identity; a removed
 * member, a name the bytes repeat in any object (json_span.ts: the upstream might read the other one than
 * the gateway checked and held for) or a name written with an escape takes the prepared object instead. A
 * server prompt is put on those bytes by the codec, or on the prepared object.
 */
function nativeBody(
  surface: Protocol,
  prepared: Record<string, unknown>,
  original: ParsedBody | undefined,
  prompt: string | undefined,
): Record<string, unknown> | Uint8Array {
  const edits = original && changedMembers(prepared, original);
  if (prompt === undefined) return edits?.bytes() ?? prepared;
  return surface.prefixSystem!(prepared, edits, prompt);
}

/** A body as the client sent it: its bytes, what they parse to, and the members JSON.parse kept (json_depth.ts). */
interface ParsedBody {
  body: Record<string, unknown>;
  raw: Uint8Array;
  members: number;
}

/**
 * `original.raw` with the members `prepared` changed or added set (not yet applied); undefined if it removed
 * one, or if the bytes repeat a name or write one with an escape.
 */
function changedMembers(prepared: Record<string, unknown>, original: ParsedBody): ObjectEdits | undefined {
  for (const k of Object.keys(original.body)) if (!Object.hasOwn(prepared, k)) return undefined;
  const scan = scanObject(original.raw);
  if (scan.members !== original.members) return undefined; // more in the text than parsed: a repeated name
  // A name written with an escape may be one Deno 2.9's JSON.parse misread (docs/api.md "Request bodies on the
  // native path"): the upstream gets the names the gateway read.
  if (scan.escapedNames) return undefined;
  const edits = new ObjectEdits(original.raw, scan);
  for (const k of Object.keys(prepared)) {
    const value = prepared[k];
    if (value === original.body[k]) continue;
    if (value === undefined) return undefined; // a removal
    edits.set(k, value);
  }
  return edits;
}
