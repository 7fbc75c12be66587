/**
 * The request path shared by the three protocols: auth, JSON, validation, directives,
 * delay, pre-body faults, then the protocol's JSON or SSE body (with mid-body faults).
 */

import { buildPlan, type Inspect, type Plan } from "./answer.ts";
import { hasFault, scanDirectives, statusFault } from "./directives.ts";
import { errorResponse, type Flavor, requestId } from "./errors.ts";
import { type Frame, halves, type SimState, sleep, streamBody } from "./stream.ts";

/** A streamed answer: frames plus the in-band error frames used by `error_mid`. */
export interface Frames {
  frames: Iterator<Frame>;
  errorFrames: () => string;
}

export interface Protocol {
  flavor: Flavor;
  /** Error message when the body is not a request this endpoint accepts. */
  validate(body: Record<string, unknown>): string | null;
  inspect(body: Record<string, unknown>): Inspect;
  json(plan: Plan, body: Record<string, unknown>, state: SimState): unknown;
  stream(plan: Plan, body: Record<string, unknown>, state: SimState): Frames;
}

/** Marker for a body that is not valid JSON. */
export const INVALID_JSON: unique symbol = Symbol("invalid-json");

const SSE_TYPE = "text/event-stream; charset=utf-8";
const JSON_TYPE = "application/json";

function authorized(h: Headers): boolean {
  return !!(h.get("x-api-key") || h.get("authorization"));
}

function baseHeaders(flavor: Flavor, type: string): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": type,
    [flavor === "anthropic" ? "request-id" : "x-request-id"]: requestId(),
  };
  if (type === SSE_TYPE) h["cache-control"] = "no-cache";
  return h;
}

export async function serveProtocol(
  proto: Protocol,
  req: Request,
  parsed: unknown,
  state: SimState,
): Promise<Response> {
  const flavor = proto.flavor;
  if (!authorized(req.headers)) {
    return errorResponse(
      flavor,
      401,
      flavor === "anthropic" ? "x-api-key header is required" : "You didn't provide an API key.",
    );
  }
  if (parsed === INVALID_JSON) {
    return errorResponse(flavor, 400, "The request body is not valid JSON.");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return errorResponse(flavor, 400, "The request body must be a JSON object.");
  }
  const body = parsed as Record<string, unknown>;
  const bad = proto.validate(body);
  if (bad) return errorResponse(flavor, 400, bad);

  const ins = proto.inspect(body);
  const { directives: d, clean } = scanDirectives(ins.turn.text);
  if (d.delay > 0) {
    // req.signal is only touched here: in Deno it also fires after successful responses.
    if (await sleep(d.delay, req.signal, state.closing.signal)) {
      if (req.signal.aborted) state.aborted++;
      return new Response(null, { status: 499 });
    }
  }
  const status = statusFault(d);
  if (status !== undefined) return errorResponse(flavor, status);
  if (hasFault(d, "non_json")) {
    return new Response("not json", { status: 200, headers: baseHeaders(flavor, JSON_TYPE) });
  }

  const plan = buildPlan(ins, d, clean);
  if (ins.stream) {
    const s = proto.stream(plan, body, state);
    return streamBody(state, {
      frames: s.frames,
      errorFrames: s.errorFrames,
      interval: plan.interval,
      mid: plan.mid,
      headers: baseHeaders(flavor, SSE_TYPE),
    });
  }
  if (plan.mid === "error_mid") {
    return flavor === "anthropic" ? errorResponse(flavor, 529) : errorResponse(flavor, 500);
  }
  const json = JSON.stringify(proto.json(plan, body, state));
  if (plan.mid) {
    return streamBody(state, {
      frames: halves(json),
      interval: 0,
      declaredLength: new TextEncoder().encode(json).length,
      mid: plan.mid,
      headers: baseHeaders(flavor, JSON_TYPE),
    });
  }
  return new Response(json, { status: 200, headers: baseHeaders(flavor, JSON_TYPE) });
}
