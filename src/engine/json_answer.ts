/**
 * A non-streaming upstream answer: usage for settlement, then the client's JSON (or the upstream's bytes). A
 * failure before the settlement below throws and leaves the hold to the request's guard (free).
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { UpstreamCallFacts } from "../families/policy.ts";
import { jsonResponse } from "../request/json.ts";
import { ONE_WRITE } from "../util/one_write.ts";
import { carryingRequestHeaders } from "../request/answer_headers.ts";
import { UpstreamProtocolError } from "../protocols/codec.ts";
import type { Exchange } from "./exchange.ts";
import type { UpstreamResponse } from "../upstream/upstream_response.ts";
import type { RunDeadline } from "./run_deadline.ts";
import { formatUsd } from "../money/usd.ts";
import { estimatedUsage } from "./settle.ts";

export async function jsonAnswer(
  res: UpstreamResponse,
  a: Exchange,
  call: UpstreamCallFacts,
  run?: RunDeadline,
): Promise<Response> {
  let text: string;
  let json: unknown;
  try {
    text = await res.text();
    json = JSON.parse(text);
  } catch {
    // The run's deadline aborted the body: settled by its rule (a family's run limit: paid for at the input
    // estimate; the generation limit: free), its own error.
    if (run?.expired) throw run.cut(a.settlement, a.inputTokens);
    throw new GatewayError(a.policy.codes.invalidResponse);
  }
  try {
    const ir = a.upstream.decodeResponse(json);
    // The family's check of the whole answer (a structured refusal): an ordinary HTTP error, free.
    const refused = a.policy.answered?.(ir, call);
    if (refused) throw refused; // released free by the guard
    // An answer the provider cut for its own reason (gamma/eta's output limit): billed, then its error.
    const failed = a.policy.answerFailed?.(ir, call);
    a.answer?.response(ir);
    const usage = ir.usage;
    const status = failed ? "error" : "ok";
    const reservation = a.settlement.reservation;
    a.settlement.settle(
      usage ? { usage, usageSource: "upstream", status } : {
        usage: estimatedUsage(
          a.inputTokens,
          ir.content.reduce((n, b) => n + textLength(b), 0),
          reservation.input.outputBudget,
        ),
        usageSource: "estimated",
        status,
      },
    );
    if (failed) throw failed; // settled already: the guard's release is a no-op
    const hold = formatUsd(reservation.amount);
    if (a.native && (json as Record<string, unknown>).model === a.encodeCtx.model) {
      // Nothing to change: the upstream's bytes go to the client as they came.
      return carryingRequestHeaders(
        new Response(text, {
          headers: {
            "content-type": "application/json",
            ...ONE_WRITE,
            ...a.ctx.headers,
            "request-id": a.ctx.requestId,
            "x-gateway-hold-usd": hold,
          },
        }),
      );
    }
    const body = a.native
      ? a.surface.relayResponse(json as Record<string, unknown>, a.encodeCtx)
      : a.surface.encodeResponse(ir, a.encodeCtx);
    return carryingRequestHeaders(
      jsonResponse(200, body, a.ctx.requestId, { ...a.ctx.headers, "x-gateway-hold-usd": hold }),
    );
  } catch (err) {
    if (err instanceof UpstreamProtocolError) throw new GatewayError(a.policy.codes.invalidResponse);
    throw err;
  }
}

const textLength = (b: { type: string; text?: string; arguments?: string }) =>
  (b.text ?? b.arguments ?? "").length;
