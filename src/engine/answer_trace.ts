/**
 * How an answer ended — its stop reason and the ids of its client tool calls — for a family that keeps state
 * across requests (a `RequestSession`, src/families/policy.ts). Filled from the streamed events or the whole
 * JSON answer, handed to the session once the request has settled. Only built when a session exists.
 */
import type { AnswerSummary, RequestSession } from "../families/policy.ts";
import type { Reservation } from "../billing/ledger.ts";
import type { IREvent, IRStopReason } from "../ir/events.ts";
import type { IRResponse } from "../ir/response.ts";

export class AnswerTrace {
  #stopReason: IRStopReason | undefined;
  readonly #callIds: string[] = [];

  /** Tells `session` how the answer ended once `reservation` settles, however it ends. */
  constructor(reservation: Reservation, session: RequestSession) {
    reservation.whenSettled((row) => session.settled(this.#summary(row.status)));
  }

  /** One streamed event (the engine passes every event the family inspects). */
  event(ev: IREvent): void {
    if (ev.type === "tool_call_start") {
      if (ev.id) this.#callIds.push(ev.id);
    } else if (ev.type === "finish") this.#stopReason = ev.reason;
  }

  /** A whole JSON answer. */
  response(res: IRResponse): void {
    this.#stopReason = res.stopReason;
    for (const b of res.content) if (b.type === "tool_call" && b.id) this.#callIds.push(b.id);
  }

  #summary(status: AnswerSummary["status"]): AnswerSummary {
    return { status, stopReason: this.#stopReason, toolCallIds: this.#callIds };
  }
}
