/**
 * A bound on one upstream run, counted from the request going out: a family's run limit
 * (`FamilyPolicy.runLimit`; gamma/eta's `delta_run_timeout`, theta's `generation_timeout`, spec §8.4), or for
 * the other families' non-streaming requests the generation limit (UPSTREAM_GENERATION_TIMEOUT_MS), since a
 * JSON answer's head comes only with the whole answer. Until a stream pipeline takes it over it is one coarse
 * timer on the shared ticker that aborts the upstream request; the pipeline then watches the same instant on
 * its own tick, so it can end the stream with the error frame. A run cut before any answer arrived is settled
 * by the bound's rule (`cut`).
 */
import type { Config } from "../config/env.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { FamilyPolicy, RunLimit } from "../families/policy.ts";
import { deadline } from "../util/ticker.ts";
import { freeSettlement, runCutSettlement } from "./settle.ts";
import type { Settlement } from "./settlement.ts";

/** What a stream pipeline needs to enforce the deadline itself. */
export interface PipelineDeadline {
  /** Epoch ms (Date.now clock). */
  at: number;
  error(): GatewayError;
}

/** A run limit, and what a run it cut before any answer arrived costs and says. */
export interface RunBound extends RunLimit {
  /**
   * A family's run limit: the provider ran it, so it is paid for (the input estimate; docs/billing.md).
   * The generation limit: free — nothing was delivered and no usage came (spec §8.1 p.4 settles on the
   * answer's usage), as the `upstream_timeout` it answers with says.
   */
  paid: boolean;
  /** Russian detail appended to the code's message. */
  detail: string;
}

/**
 * The bound of one exchange: the family's run limit when it has one (never shortened by the generation
 * limit); else the generation limit on a non-streaming request; else none (a stream: the headers timeout
 * bounds its head, STREAM_IDLE_TIMEOUT_MS its silences).
 */
export function runBound(policy: FamilyPolicy, config: Config, stream: boolean): RunBound | undefined {
  const limit = policy.runLimit?.(config);
  if (limit) return { ...limit, paid: true, detail: `Предел времени выполнения: ${limit.ms / 1000} с.` };
  if (stream) return undefined;
  const ms = config.UPSTREAM_GENERATION_TIMEOUT_MS;
  return {
    ms,
    code: policy.codes.timedOut,
    paid: false,
    detail: `Предел ожидания полного ответа: ${ms / 1000} с.`,
  };
}

export class RunDeadline {
  readonly at: number;
  readonly #bound: RunBound;
  #expired = false;
  readonly #stop: () => void;

  constructor(bound: RunBound, abort: AbortController) {
    this.#bound = bound;
    this.at = Date.now() + bound.ms;
    this.#stop = deadline(bound.ms, () => {
      this.#expired = true;
      abort.abort(new DOMException("run limit", "AbortError"));
    });
  }

  /** Whether the deadline passed and aborted the upstream request. */
  get expired(): boolean {
    return this.#expired;
  }

  error(): GatewayError {
    return new GatewayError(this.#bound.code, { detail: this.#bound.detail });
  }

  /** The deadline cut the run before any answer arrived: settles it by the bound's rule; its error. */
  cut(settlement: Settlement, inputTokens: number): GatewayError {
    settlement.settle(
      this.#bound.paid ? runCutSettlement(settlement.reservation, inputTokens) : freeSettlement(false),
    );
    return this.error();
  }

  /**
   * Stops the timer (the run ended); the pipeline gets the same instant to watch. Only a family's run limit
   * is handed over: the generation limit bounds non-streaming requests alone, and the pipeline bills a run its
   * deadline cut.
   */
  handOver(): PipelineDeadline {
    this.#stop();
    return { at: this.at, error: () => this.error() };
  }

  stop(): void {
    this.#stop();
  }
}
