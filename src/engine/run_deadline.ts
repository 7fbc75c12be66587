/**
 * A family's bound on one upstream run (`FamilyPolicy.runLimit`; gamma/eta's `delta_run_timeout`, spec §8.4),
 * counted from the request going out. Until a stream pipeline takes it over it is one coarse timer on the
 * shared ticker that aborts the upstream request; the pipeline then watches the same instant on its own tick,
 * so it can end the stream with the error frame. A run the deadline cut is billed (settle.ts `settleRunCut`).
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { RunLimit } from "../families/policy.ts";
import { deadline } from "../util/ticker.ts";

/** What a stream pipeline needs to enforce the deadline itself. */
export interface PipelineDeadline {
  /** Epoch ms (Date.now clock). */
  at: number;
  error(): GatewayError;
}

export class RunDeadline {
  readonly at: number;
  readonly #limit: RunLimit;
  #expired = false;
  readonly #stop: () => void;

  constructor(limit: RunLimit, abort: AbortController) {
    this.#limit = limit;
    this.at = Date.now() + limit.ms;
    this.#stop = deadline(limit.ms, () => {
      this.#expired = true;
      abort.abort(new DOMException("run limit", "AbortError"));
    });
  }

  /** Whether the deadline passed and aborted the upstream request. */
  get expired(): boolean {
    return this.#expired;
  }

  error(): GatewayError {
    const seconds = this.#limit.ms / 1000;
    return new GatewayError(this.#limit.code, { detail: `Предел времени выполнения: ${seconds} с.` });
  }

  /** Stops the timer (the run ended); the pipeline gets the same instant to watch. */
  handOver(): PipelineDeadline {
    this.#stop();
    return { at: this.at, error: () => this.error() };
  }

  stop(): void {
    this.#stop();
  }
}
