/**
 * The lease book of a key in Deno KV (docs/ledger_leases.md): one value per key (kv_keys.ts `keyLedger`)
 * with every holder's lease and the shared windows, rewritten whole under a versionstamp `check` (KV `sum`
 * is u64 only, so leases cannot be added to like the money counters). The book's changes are pure functions;
 * `optimistic` and `commitChecked` (kv_atomic.ts) are the write loop the store runs them in. Takes and renewals prune the
 * leases expired at their `now` (those already count for nothing).
 */
import type { LeaseDecision, LeaseDelta, LeaseView, SharedWindow } from "./types.ts";
import { addToWindow, rollWindow } from "./shared_window.ts";

export interface StoredLease {
  amount: bigint;
  /** Unix ms; the lease is live while expiresAt > now. */
  expiresAt: number;
}

export interface LeaseBook {
  leases: Record<string, StoredLease>;
  window: SharedWindow;
}

/** The book's leases live at `now` (a new object). */
function liveLeases(book: LeaseBook | null, now: number): Record<string, StoredLease> {
  const out: Record<string, StoredLease> = {};
  for (const [holder, l] of Object.entries(book?.leases ?? {})) if (l.expiresAt > now) out[holder] = { ...l };
  return out;
}

/** The key's view for `holder` at `now`, from its counters and its book. */
export function leaseViewOf(
  money: { credited: bigint; spent: bigint },
  book: LeaseBook | null,
  holder: string,
  now: number,
): LeaseView {
  const live = liveLeases(book, now);
  let leased = 0n;
  for (const l of Object.values(live)) leased += l.amount;
  return {
    credited: money.credited,
    spent: money.spent,
    leased,
    mine: live[holder]?.amount ?? 0n,
    window: rollWindow(book?.window, now),
  };
}

/** The book after a take: the holder's lease is `mine + grant` until `now + ttlMs`, reserve added. */
export function bookAfterTake(
  book: LeaseBook | null,
  holder: string,
  now: number,
  ttlMs: number,
  view: LeaseView,
  d: LeaseDecision,
): LeaseBook {
  const leases = liveLeases(book, now);
  const amount = view.mine + d.grant;
  if (amount > 0n) leases[holder] = { amount, expiresAt: now + ttlMs };
  return { leases, window: addToWindow(book?.window, now, 0n, d.reserved) };
}

/**
 * The book after a settlement at `at`: the holder's lease shrinks by `spent + returned` (gone at 0 or when
 * expired at `at`; an absent one stays absent), the windows add `spent` and `reserved`. Other holders'
 * leases are left as they are: `at` is the settling process's clock, which may run ahead of theirs.
 */
export function bookAfterSettle(
  book: LeaseBook | null,
  at: number,
  spent: bigint,
  lease: LeaseDelta,
): LeaseBook {
  const leases = { ...book?.leases };
  const mine = leases[lease.holder];
  if (mine) {
    const amount = mine.amount - spent - lease.returned;
    if (amount <= 0n || mine.expiresAt <= at) delete leases[lease.holder];
    else leases[lease.holder] = { ...mine, amount };
  }
  return { leases, window: addToWindow(book?.window, at, spent, lease.reserved) };
}

/** The book with the holder's live lease extended to `now + ttlMs`; null when it has none live at `now`. */
export function bookAfterRenew(
  book: LeaseBook | null,
  holder: string,
  now: number,
  ttlMs: number,
): LeaseBook | null {
  const leases = liveLeases(book, now);
  const mine = leases[holder];
  if (!mine || !book) return null;
  mine.expiresAt = now + ttlMs;
  return { leases, window: book.window };
}
