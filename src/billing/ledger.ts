/**
 * Reserve → settle for one request (spec §8.1 p.2–4), priced here and moved by the Ledger
 * (src/accounts/ledger.ts). A Reservation is created only after every local check passed and the
 * ledger placed the hold; it settles exactly once (later calls are no-ops), releasing the hold and
 * charging actual usage, and queues the usage row. The hold is priced at the tariff row of the estimated
 * input, the charge at the row of the actual input (theta's plus tiers, spec §8.1).
 */
import type { Account } from "../accounts/account.ts";
import type { Ledger, OpenCheckpoint } from "../accounts/ledger.ts";
import type { ModelEntry } from "../catalog/models.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { IRUsage } from "../ir/usage.ts";
import type { UsageRow } from "../store/types.ts";
import type { CapCodes } from "../accounts/caps.ts";
import { chargeAmount, reserveAmount, searchFee } from "./price.ts";
import type { Rates, Tariff } from "./tariff.ts";
import type { Logger } from "../util/log.ts";

export interface ReserveInput {
  account: Account;
  /** The family's codes for the key's caps. */
  capCodes: CapCodes;
  model: ModelEntry;
  inputTokens: number;
  outputBudget: number;
  requestId: string;
  endpoint: string;
  stream: boolean;
  /** Provider-billed searches the request may make; their fee is held too (spec §8.1 p.6). */
  maxSearches?: number;
}

export interface SettleInput {
  usage: IRUsage;
  usageSource: UsageRow["usageSource"];
  status: UsageRow["status"];
}

export class Reservation {
  #settled = false;
  #onSettled: ((row: UsageRow) => void)[] = [];
  /** The drain checkpoint of an open stream (`trackOpen`), dropped by the settlement. */
  #open: OpenCheckpoint | undefined;
  /** Set when another model than the requested one answers (theta's fallback): recorded on the row. */
  #servedModel: string | undefined;

  constructor(
    private readonly ledger: Ledger,
    readonly input: ReserveInput,
    /**
     * The model's rates for a request with this much input, from the tariff the reserve was priced with:
     * settlement prices the whole request at the row of its actual input (theta's tiers, spec §8.1).
     */
    private readonly ratesAt: (inputTokens: number) => Rates,
    readonly amount: bigint,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  /**
   * Charges actual usage and releases the hold. Idempotent: only the first call counts.
   * The charge never drives the balance below zero (docs/billing.md, usage beyond the hold): it is capped at the
   * hold plus the credit no other hold covers; an estimate is capped at the hold itself. What usage
   * priced beyond the cap is the operator's loss, recorded on the usage row as `writtenOff`.
   */
  settle(s: SettleInput): bigint {
    if (this.#settled) return 0n;
    this.#settled = true;
    const row = this.#row(s);
    if (row.writtenOff > 0n) {
      this.log.warn("usage beyond the hold written off", {
        request_id: row.requestId,
        key_id: row.keyId,
        written_off_pusd: String(row.writtenOff),
      });
    }
    this.ledger.settle(this.input.account, this.amount, row.charged, row, this.#open);
    for (const fn of this.#onSettled) fn(row);
    return row.charged;
  }

  /** Another model than the requested one answers; the request is still charged at the requested rates. */
  servedBy(model: string): void {
    this.#servedModel = model === this.input.model.id ? undefined : model;
  }

  /** Runs `fn` once the request has settled (an upstream lease's release, family bookkeeping). */
  whenSettled(fn: (row: UsageRow) => void): void {
    this.#onSettled.push(fn);
  }

  /** For drain checkpoints: what this request would settle with if it were cut now (undefined: free). */
  trackOpen(cutNow: () => SettleInput | undefined): void {
    this.#open = this.ledger.trackOpen(() => {
      const s = cutNow();
      return s && this.#row(s);
    });
  }

  #row(s: SettleInput): UsageRow {
    const { account, model, requestId, endpoint, stream } = this.input;
    const rates = this.ratesAt(s.usage.inputTokens);
    const price = chargeAmount(rates, s.usage, account.rec.membership === "private");
    const free = this.ledger.spareCredit(account); // excludes this hold, which is still counted
    let ceiling = s.usageSource === "estimated" || free < 0n ? this.amount : this.amount + free;
    if (ceiling < 0n) ceiling = 0n;
    const charge = price < ceiling ? price : ceiling;
    return {
      requestId,
      keyId: account.rec.id,
      family: model.family,
      model: model.id,
      endpoint,
      stream,
      status: s.status,
      createdAt: this.now(),
      inputTokens: s.usage.inputTokens,
      cachedInputTokens: s.usage.cachedInputTokens,
      outputTokens: s.usage.outputTokens,
      webSearchRequests: s.usage.webSearchRequests,
      searchFee: searchFee(rates, s.usage.webSearchRequests),
      reserved: this.amount,
      charged: charge,
      writtenOff: price - charge,
      usageSource: s.usageSource,
      ...(this.#servedModel === undefined ? {} : { servedModel: this.#servedModel }),
      rates: { input: rates.input, cacheRead: rates.cacheRead, output: rates.output, search: rates.search },
    };
  }
}

/** Prices the reserve and has the ledger place the hold (credit, caps and hold in one atomic step). */
export async function reserve(
  ledger: Ledger,
  tariff: Tariff,
  input: ReserveInput,
  now: () => number,
  log: Logger,
): Promise<Reservation> {
  const rates = tariff.rates(input.model.id, input.inputTokens);
  if (!rates) throw new GatewayError("internal_error", { detail: "Нет тарифа для модели." });
  const amount = reserveAmount(
    rates,
    input.inputTokens,
    input.outputBudget,
    input.account.rec.membership === "private",
    input.maxSearches,
  );
  await ledger.hold(input.account, { amount, capCodes: input.capCodes, now: now() });
  // The tariff of this moment (a change replaces the Tariff whole): a request is priced by one tariff.
  const ratesAt = (tokens: number) => tariff.rates(input.model.id, tokens) ?? rates;
  return new Reservation(ledger, input, ratesAt, amount, now, log);
}
