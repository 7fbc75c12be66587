/** Billing and leases settings: shared-store credit leases, settlement durability, the demo key. */
import { z } from "zod";
import { ms } from "./fields.ts";

export const billing = {
  LEASE_TTL_MS: ms(30_000).describe(
    "Shared stores: a dead process's leased credit is back after at most this long, ms " +
      "(docs/ledger_leases.md). Default 30 s.",
  ),
  LEASE_IDLE_MS: ms(5_000).describe(
    "Shared stores: a key's unused leased credit goes back after this long without a hold, ms. " +
      "Default 5 s.",
  ),
  KEY_REFRESH_MS: ms(1_000).describe(
    "Shared stores: how often a process reads the key changes other processes made (revocations, " +
      "caps, new keys), ms. Default 1 s.",
  ),
  SETTLE_DURABILITY_MS: ms(250).describe(
    "The durability window of settlements, what a kill -9 may lose, ms: /readyz fails " +
      "(`settlements`) while a settlement has waited longer than this to be durable. Default 250 ms.",
  ),
  IDEMPOTENCY_TTL_MS: ms(86_400_000).describe(
    "How long an `Idempotency-Key` stays bound to its request and answer, per gateway key, ms " +
      "(docs/idempotency.md). Default 24 h.",
  ),
  IDEMPOTENCY_DETACH_MS: ms(30_000).describe(
    "A keyed request whose client went away keeps running this long waiting for a retry to attach, ms; " +
      "then it is cancelled and billed as a cut stream. Default 30 s.",
  ),
  IDEMPOTENCY_MAX_BUFFER_BYTES: ms(8 * 1024 * 1024).describe(
    "The most one keyed answer keeps for replay, bytes; a longer one is not kept and a retry gets 409 " +
      "`idempotency_replay_unavailable`. Default 8 MiB.",
  ),
  IDEMPOTENCY_MAX_TOTAL_BYTES: ms(256 * 1024 * 1024).describe(
    "The most every running keyed answer of this process keeps together, bytes; an answer that would " +
      "pass it is not kept (as above). Default 256 MiB.",
  ),
  IDEMPOTENCY_LEASE_MS: ms(15_000).describe(
    "A process running a keyed request renews its claim on the key within this long, ms; the key of a " +
      "process that died is free again after it. Default 15 s.",
  ),
  DEMO_BALANCE_USD: z.string().regex(/^\d+(\.\d{1,12})?$/).default("1.00").describe(
    "Balance in USD of the demo key created and printed at start-up in demo mode (no " +
      "`*_UPSTREAM_URL` set). Default 1.00.",
  ),
};
