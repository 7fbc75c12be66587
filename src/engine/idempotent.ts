/**
 * A generation request with an `Idempotency-Key` (docs/idempotency.md): the first request with the key runs, and
 * every retry of the same request gets its answer — whole, from the first byte, never charged. The key is
 * claimed in the store (one run across every process); the answer is read by the run, not by the client
 * (src/idempotency/keyed_run.ts), so a client that drops and retries attaches to the run still going; a
 * finished answer is kept in the store until the key expires. Without the header: `generate` as it is.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { errorResponse } from "../errors/render.ts";
import { readBodyBytes } from "../request/body.ts";
import type { KeyContext } from "../request/context.ts";
import { requestFingerprint } from "../idempotency/fingerprint.ts";
import { idempotencyKey } from "../idempotency/header.ts";
import type { KeyedRun } from "../idempotency/keyed_run.ts";
import type { IdempotencyRecord, StoredAnswerHead } from "../store/store.ts";
import { asGatewayError } from "../request/as_gateway_error.ts";
import { generate, type SurfaceRoute } from "./generate.ts";

const REPLAYED_HEADER = "idempotent-replayed";
/** How often a retry looks at a run another process holds. */
const POLL_MS = 100;
/** A retry that found the key changing under it this many times gives up (a run failing again and again). */
const MAX_ATTEMPTS = 8;

export function generateOnce(app: App, ctx: KeyContext, route: SurfaceRoute): Promise<Response> {
  const key = idempotencyKey(ctx.req.headers);
  // Without the header: `generate` itself, not one more frame or await on the way.
  return key === undefined ? generate(app, ctx, route) : keyed(app, ctx, route, key);
}

async function keyed(app: App, ctx: KeyContext, route: SurfaceRoute, key: string): Promise<Response> {
  const raw = await readBodyBytes(ctx.req, app.config.BODY_LIMIT_BYTES);
  const fingerprint = requestFingerprint(route.surface, ctx.url.pathname, raw);
  const keyId = ctx.account.rec.id;
  const clientGone = ctx.req.signal;
  const runs = app.keyedRuns;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const local = runs.get(keyId, key);
    if (local) {
      if (local.fingerprint !== fingerprint) throw new GatewayError("idempotency_key_reused");
      const answer = await attachOrRetry(local, clientGone);
      if (answer === "again") continue;
      return answer ?? unavailable(ctx);
    }
    const claim = await app.store.claimIdempotency(keyId, key, {
      fingerprint,
      holder: runs.holder,
      now: app.now(),
      leaseMs: app.config.IDEMPOTENCY_LEASE_MS,
      ttlMs: app.config.IDEMPOTENCY_TTL_MS,
    });
    if (claim.claimed) return await runFirst(app, ctx, route, { key, fingerprint, raw });
    const rec = claim.record;
    if (rec.fingerprint !== fingerprint) throw new GatewayError("idempotency_key_reused");
    if (rec.state === "done") {
      const replay = await replayStored(app, keyId, key, rec);
      if (replay) return replay;
      continue; // expired between the two reads: claim again
    }
    await othersRun(app, keyId, key, rec, clientGone);
  }
  return unavailable(ctx);
}

/** A retry attached to this process's run: its answer, null when not kept whole, "again" when it failed. */
async function attachOrRetry(run: KeyedRun, clientGone: AbortSignal): Promise<Response | null | "again"> {
  let answer;
  try {
    answer = await run.attach(clientGone, false);
  } catch (err) {
    if (clientGone.aborted) throw err;
    return "again"; // the run was refused and its claim released: this request runs as new
  }
  return answer && replayed(answer.head, answer.body);
}

/** The first request with the key: run through `generate`, its answer read by the run and kept. */
async function runFirst(
  app: App,
  ctx: KeyContext,
  route: SurfaceRoute,
  req: { key: string; fingerprint: string; raw: Uint8Array },
): Promise<Response> {
  const keyId = ctx.account.rec.id;
  const { key } = req;
  const runs = app.keyedRuns;
  const store = app.store;
  const clientGone = ctx.req.signal;
  const run = runs.start(keyId, key, req.fingerprint);
  // A graceful shutdown waits for the answer to be stored (or the claim released): the store closes after it.
  const leave = app.inflight.enter();
  const leaseMs = app.config.IDEMPOTENCY_LEASE_MS;
  const renewal = setInterval(() => {
    store.renewIdempotency(keyId, key, runs.holder, app.now(), leaseMs).catch(() => {});
  }, Math.max(1, Math.floor(leaseMs / 3)));
  // The run's own signal stands for the client's: a client that leaves does not cancel it (keyed_run.ts).
  ctx.req = new Request(ctx.req.url, {
    method: ctx.req.method,
    headers: ctx.req.headers,
    body: req.raw as Uint8Array<ArrayBuffer>,
    signal: run.abort.signal,
  });
  let res: Response;
  try {
    res = await generate(app, ctx, route);
  } catch (err) {
    if (ctx.trace.charged === 0n) {
      // Refused, or failed with nothing charged: nothing is kept, and a retry runs as new.
      clearInterval(renewal);
      run.fail(err);
      runs.end(keyId, key, run);
      await store.releaseIdempotency(keyId, key, runs.holder).catch(() => {});
      leave();
      throw err;
    }
    // Charged and failed (a run limit's cut): that answer is the request's, kept like any other.
    res = errorResponse(asGatewayError(err), ctx.envelope, ctx.requestId, ctx.headers);
  }
  run.start(headOf(res), res.body);
  void run.ended.then(async (end) => {
    clearInterval(renewal);
    try {
      const answer = end?.body ? end : await replayUnavailable(ctx);
      await store.finishIdempotency(keyId, key, runs.holder, {
        head: answer.head,
        body: answer.body!,
        expiresAt: app.now() + app.config.IDEMPOTENCY_TTL_MS,
      });
    } catch (err) {
      // Not stored: the claim's lease runs out and the key is free again.
      app.log.error("idempotent answer not stored", {
        request_id: ctx.requestId,
        error: err instanceof Error ? err.message : String(err),
      });
    } finally {
      runs.end(keyId, key, run);
      leave();
    }
  });
  const mine = await run.attach(clientGone, true);
  return answerOf(mine!.head, mine!.body, {});
}

/** Waits while another process (or a dead one, until its lease ends) holds the key; bounded, then returns. */
async function othersRun(
  app: App,
  keyId: string,
  key: string,
  rec: IdempotencyRecord,
  clientGone: AbortSignal,
): Promise<void> {
  const until = app.now() + app.config.UPSTREAM_GENERATION_TIMEOUT_MS + app.config.IDEMPOTENCY_LEASE_MS;
  let current: IdempotencyRecord | null = rec;
  while (current?.state === "running" && current.leaseUntil > app.now() && app.now() < until) {
    if (clientGone.aborted) throw clientGone.reason;
    await new Promise((r) => setTimeout(r, POLL_MS));
    current = await app.store.getIdempotency(keyId, key, app.now());
  }
}

async function replayStored(
  app: App,
  keyId: string,
  key: string,
  rec: IdempotencyRecord,
): Promise<Response | null> {
  const body = await app.store.idempotentBody(keyId, key, app.now());
  return body && rec.answer ? replayed(rec.answer, body) : null;
}

/** An answer's body: bytes (a whole JSON answer, a stored one) or a stream read from a run. */
type AnswerBody = Uint8Array | ReadableStream<Uint8Array>;

function replayed(head: StoredAnswerHead, body: AnswerBody): Response {
  return answerOf(head, body, { [REPLAYED_HEADER]: "true" });
}

function answerOf(head: StoredAnswerHead, body: AnswerBody, extra: Record<string, string>): Response {
  const headers = new Headers(head.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return new Response(body as BodyInit, { status: head.status, headers });
}

/** The answer's head as kept: its length is the body's, known at the end. */
function headOf(res: Response): StoredAnswerHead {
  const headers: [string, string][] = [];
  for (const [name, value] of res.headers) if (name !== "content-length") headers.push([name, value]);
  const type = res.headers.get("content-type") ?? "";
  return { status: res.status, headers, stream: type.startsWith("text/event-stream"), bytes: 0 };
}

/** What a retry gets when the answer was not kept whole (over a bound, or cut with no client left). */
async function replayUnavailable(ctx: KeyContext): Promise<{ head: StoredAnswerHead; body: Uint8Array }> {
  const res = unavailable(ctx);
  const body = await res.bytes();
  const headers = [...res.headers].filter(([name]) => name !== "content-length");
  return { head: { status: res.status, headers, stream: false, bytes: body.byteLength }, body };
}

function unavailable(ctx: KeyContext): Response {
  return errorResponse(
    new GatewayError("idempotency_replay_unavailable"),
    ctx.envelope,
    ctx.requestId,
    ctx.headers,
  );
}
