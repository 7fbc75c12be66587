/**
 * How an exchange settles its hold (spec §8.1 p.4; docs/billing.md): upstream usage when reported
 * (zero stays zero), otherwise an estimate of what was delivered; a failure before any answer costs nothing.
 * Rules only: the settlement itself goes through the request's one guard (settlement.ts).
 */
import type { Reservation, SettleInput } from "../billing/ledger.ts";
import { estimateOutputTokens } from "../billing/estimate.ts";
import { emptyUsage, type IRUsage } from "../ir/usage.ts";
import type { StreamOutcome } from "./stream_pipeline.ts";

/** No answer reached the client: release the hold, charge nothing. */
export function freeSettlement(cancelled: boolean): SettleInput {
  return { usage: emptyUsage(), usageSource: "upstream", status: cancelled ? "cancelled" : "error" };
}

/**
 * A run the family's deadline cut before any answer arrived (a JSON answer, or no response head yet): the
 * provider ran it, so it is paid for — the input estimate, no output (none was delivered), status error.
 */
export function runCutSettlement(reservation: Reservation, inputTokens: number): SettleInput {
  return {
    usage: estimatedUsage(inputTokens, 0, reservation.input.outputBudget),
    usageSource: "estimated",
    status: "error",
  };
}

/** Usage estimated from delivered text, the output never above the request's output budget. */
export function estimatedUsage(inputTokens: number, deliveredChars: number, outputBudget: number): IRUsage {
  const outputTokens = Math.min(estimateOutputTokens(deliveredChars), outputBudget);
  return { ...emptyUsage(), inputTokens, outputTokens };
}

/**
 * spec §8.1 p.4: upstream usage when reported (zero stays zero); else an estimate of what was delivered,
 * within the output budget. A stream that never decoded one upstream event had no answer: undefined, free —
 * unless the run deadline cut it (`expired`): a run is paid for, at least its input estimate.
 */
export function streamSettlement(
  reservation: Reservation,
  o: StreamOutcome,
  inputTokens: number,
): SettleInput | undefined {
  if ((o.events === 0 && !o.expired) || o.refused) return undefined; // no answer, or refused before the 200
  const status = o.cancelled ? "cancelled" : o.error ? "error" : "ok";
  const budget = reservation.input.outputBudget;
  if (!o.usage) {
    return { usage: estimatedUsage(inputTokens, o.deliveredChars, budget), usageSource: "estimated", status };
  }
  if (o.finished) return { usage: o.usage, usageSource: "upstream", status };
  // A stream cut after message_start knows the input but not the output: never charge less than was delivered.
  const delivered = Math.min(estimateOutputTokens(o.deliveredChars), budget);
  return {
    usage: { ...o.usage, outputTokens: Math.max(o.usage.outputTokens, delivered) },
    usageSource: "estimated",
    status,
  };
}
