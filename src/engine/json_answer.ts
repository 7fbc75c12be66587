/** A non-streaming upstream answer: usage for settlement, then the client's JSON (or the upstream's bytes). */
import { GatewayError } from "../errors/gateway_error.ts";
import { jsonResponse } from "../request/json.ts";
import { UpstreamProtocolError } from "../protocols/codec.ts";
import type { Exchange } from "./exchange.ts";
import { estimatedUsage, settleFailed } from "./settle.ts";

export async function jsonAnswer(
  res: Response,
  a: Exchange,
): Promise<Response> {
  let text: string;
  let json: unknown;
  try {
    text = await res.text();
    json = JSON.parse(text);
  } catch {
    settleFailed(a.reservation, false);
    throw new GatewayError(a.policy.codes.invalidResponse);
  }
  try {
    const ir = a.upstream.decodeResponse(json);
    // The family's check of the whole answer (a structured refusal): an ordinary HTTP error, free.
    const refused = a.policy.answered?.(ir);
    if (refused) throw refused; // settled as failed below
    a.answer?.response(ir);
    const usage = ir.usage;
    a.reservation.settle(
      usage ? { usage, usageSource: "upstream", status: "ok" } : {
        usage: estimatedUsage(
          a.inputTokens,
          ir.content.reduce((n, b) => n + textLength(b), 0),
          a.reservation.input.outputBudget,
        ),
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
    settleFailed(a.reservation, false);
    if (err instanceof UpstreamProtocolError) throw new GatewayError(a.policy.codes.invalidResponse);
    throw err;
  }
}

const textLength = (b: { type: string; text?: string; arguments?: string }) =>
  (b.text ?? b.arguments ?? "").length;
