/**
 * How an exchange settles its hold (§8.1 p.4 and the billing issue): upstream usage when reported
 * (zero stays zero), otherwise an estimate of what was delivered; a failure before any answer costs nothing.
 */
import type { Reservation } from "../billing/ledger.ts";
import { estimateOutputTokens } from "../billing/estimate.ts";
import { emptyUsage, type IRUsage } from "../ir/usage.ts";
import type { StreamOutcome } from "./stream_pipeline.ts";

/** No answer reached the client: release the hold, charge nothing. */
export function settleFailed(reservation: Reservation, cancelled: boolean): void {
  reservation.settle({
    usage: emptyUsage(),
    usageSource: "upstream",
    status: cancelled ? "cancelled" : "error",
  });
}

export function estimatedUsage(inputTokens: number, deliveredChars: number): IRUsage {
  return { ...emptyUsage(), inputTokens, outputTokens: estimateOutputTokens(deliveredChars) };
}

/** §8.1 p.4 and the rule: upstream usage when reported (zero stays zero); else an estimate of what was delivered. */
export function settleStream(reservation: Reservation, o: StreamOutcome, inputTokens: number): void {
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
