/** What every store refuses of a take's decision (store.ts LeaseTake), checked before anything is written. */
import type { LeaseDecision, LeaseView } from "./types.ts";

/** RangeError for a grant or reserve below 0 or a grant above `credited − spent − leased`. A zero grant is
 *  never refused, even when settlements of expired leases left the available credit below zero. */
export function checkDecision(view: LeaseView, d: LeaseDecision): void {
  if (d.grant < 0n || d.reserved < 0n) {
    throw new RangeError(`lease decision below zero: grant ${d.grant}, reserve ${d.reserved}`);
  }
  const available = view.credited - view.spent - view.leased;
  if (d.grant > 0n && d.grant > available) {
    throw new RangeError(`lease grant ${d.grant} above the available ${available}`);
  }
}
