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

/** Usage estimated from delivered text, the output never above the request's output budget. */
export function estimatedUsage(inputTokens: number, deliveredChars: number, outputBudget: number): IRUsage {
  const outputTokens = Math.min(estimateOutputTokens(deliveredChars), outputBudget);
  return { ...emptyUsage(), inputTokens, outputTokens };
}

/**
 * spec §8.1 p.4: upstream usage when reported (zero stays zero); else an estimate of what was delivered,
 * within the output budget. A stream that never decoded one upstream event had no answer: free.
 */
export function settleStream(reservation: Reservation, o: StreamOutcome, inputTokens: number): void {
  if (o.events === 0) return settleFailed(reservation, o.cancelled);
  const status = o.cancelled ? "cancelled" : o.error ? "error" : "ok";
  const budget = reservation.input.outputBudget;
  if (o.usage) {
    // A stream cut after message_start knows the input but not the output: never charge less than was delivered.
    const delivered = Math.min(estimateOutputTokens(o.deliveredChars), budget);
    const usage = o.finished
      ? o.usage
      : { ...o.usage, outputTokens: Math.max(o.usage.outputTokens, delivered) };
    reservation.settle({ usage, usageSource: o.finished ? "upstream" : "estimated", status });
  } else {
    reservation.settle({
      usage: estimatedUsage(inputTokens, o.deliveredChars, budget),
      usageSource: "estimated",
      status,
    });
  }
}
