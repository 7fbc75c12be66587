/**
 * Gamma/eta client tool loops per key (spec §7.5 `delta_key_pause_limit`; docs/families/gamma-eta.md).
 *
 * - An answer that completes with stop reason `tool_calls` (waiting for the client's tool results) opens a
 *   loop for the key, holding that answer's tool call ids; it expires `ttlMs` after that answer ended.
 * - A request carrying a tool result (any `tool_result` part of its messages) for a call id of an open loop
 *   continues that loop. When its answer completes: ending in `tool_calls` again, the loop stays open under
 *   the same id with the new call ids and a fresh expiry (continued, not a new loop); ending otherwise, the
 *   loop is closed. A request continuing several loops merges them into the first one.
 * - A failed or cancelled answer changes nothing: a new request opens nothing, a continuation leaves its loop
 *   open (the client may retry it with the same results) until its expiry.
 * - At `maxOpen` open loops, a request that continues none and offers tools (one that could open a loop) is
 *   refused before anything is held or sent, with `Retry-After` = seconds until enough loops expire to free a
 *   slot. A request continuing an open loop is always admitted; one with neither tools nor tool results can
 *   neither open nor continue a loop and is admitted without touching the store.
 *
 * Cost: one store read (the key's loops) before the hold and, when a loop opens, continues or closes, one
 * atomic write after the answer. The limit is checked at admission, so requests admitted concurrently below it
 * can together overshoot it by their number; later new requests are then refused until the count is back under.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IRRequest } from "../../ir/request.ts";
import type { MemberChange, SetMember } from "../../store/store.ts";
import type { Logger } from "../../util/log.ts";
import type { AnswerSummary, RequestAdmission, RequestSession } from "../policy.ts";

/** The store's expiring set of the loops, one owner per key (Store.listMembers). Never changed: the stored
 *  loops (KV keys, Postgres rows) are found under it. */
export const LOOP_SET = "tool_loop";

/**
 * An unfinished client tool loop (spec §7.5): the last answer of a conversation ended waiting for the client's
 * results of these tool calls. Times are Unix milliseconds.
 */
export interface ToolLoop extends SetMember {
  keyId: string;
  /** Stable for the loop's life: the id of the request whose answer opened it. */
  id: string;
  /** The tool calls of the loop's last answer, whose results continue it. */
  callIds: string[];
  /** When the loop's last answer ended. */
  updatedAt: number;
  /** When the loop is gone unless continued (the store removes it then). */
  expiresAt: number;
}

/** One atomic change of a key's loops: the `remove` ids closed, `put` written (a new or renewed loop). */
export type ToolLoopChange = MemberChange<ToolLoop>;

export interface LoopSettings {
  maxOpen: number;
  ttlMs: number;
}

/**
 * One gateway's tool loops: admission of each gamma/eta request, and the loop writes of this gateway still in
 * flight per key. An admission waits for its key's, so a client's next request sees what its previous answer
 * did even when it arrives before that write landed.
 */
export class ToolLoops {
  readonly #writing = new Map<string, Promise<void>>();

  constructor(private readonly settings: LoopSettings, private readonly log: Logger) {}

  /** Admission of one gamma/eta request to the key's tool loops; the session records how its answer ended. */
  async admit(a: RequestAdmission): Promise<RequestSession | undefined> {
    const settings = this.settings;
    const results = toolResultIds(a.ir);
    const offersTools = a.ir.tools.length > 0;
    if (results.size === 0 && !offersTools) return undefined;
    await this.#writing.get(a.keyId);
    const now = a.now();
    const loops = await a.store.listMembers<ToolLoop>(LOOP_SET, a.keyId, now);
    const continued = loops.filter((l) => l.callIds.some((id) => results.has(id))).map((l) => l.id);
    if (continued.length === 0) {
      if (!offersTools) return undefined;
      if (loops.length >= settings.maxOpen) {
        // Loops are listed by expiry: once the first (n − max + 1) have expired the key is below the limit.
        const freed = loops[loops.length - settings.maxOpen]!.expiresAt;
        throw new GatewayError("delta_key_pause_limit", {
          retryAfter: Math.max(1, Math.ceil((freed - now) / 1000)),
          detail: `Открытых циклов: ${loops.length} из ${settings.maxOpen}.`,
        });
      }
    }
    // The session lives until the request settles (a stream's whole length): it keeps these, never `a`,
    // which holds the request's IR (its prompt).
    const { store, keyId, requestId } = a;
    const clock = a.now;
    return {
      settled: (answer: AnswerSummary) => {
        const now = clock();
        const change = loopChange(keyId, requestId, continued, answer, now, settings.ttlMs);
        if (change) this.#track(keyId, store.updateMembers(LOOP_SET, keyId, change, now));
      },
    };
  }

  /** Waits for the loop writes in flight (the gateway's close: none lands on a closed store). */
  async close(): Promise<void> {
    while (this.#writing.size > 0) await Promise.all(this.#writing.values());
  }

  #track(keyId: string, write: Promise<void>): void {
    const logged = write.catch((err) =>
      this.log.error("tool loop write failed", {
        key_id: keyId,
        error: err instanceof Error ? err.message : String(err),
      })
    );
    const all = Promise.all([this.#writing.get(keyId), logged]).then(() => {
      if (this.#writing.get(keyId) === all) this.#writing.delete(keyId);
    });
    this.#writing.set(keyId, all);
  }
}

/**
 * What an answer does to the key's loops (the rule at the top): undefined when nothing changes. `continued`
 * are the ids of the open loops the request continued; `requestId` names a loop the answer opens.
 */
export function loopChange(
  keyId: string,
  requestId: string,
  continued: string[],
  answer: AnswerSummary,
  now: number,
  ttlMs: number,
): ToolLoopChange | undefined {
  if (answer.status !== "ok") return undefined;
  if (answer.stopReason === "tool_calls" && answer.toolCallIds.length > 0) {
    const open: ToolLoop = {
      keyId,
      id: continued[0] ?? requestId,
      callIds: [...new Set(answer.toolCallIds)],
      updatedAt: now,
      expiresAt: now + ttlMs,
    };
    return { remove: continued.slice(1), put: open };
  }
  return continued.length > 0 ? { remove: continued } : undefined;
}

/** The call ids the request's tool results answer. */
function toolResultIds(ir: IRRequest): Set<string> {
  const ids = new Set<string>();
  for (const m of ir.messages) {
    for (const p of m.parts) if (p.type === "tool_result") ids.add(p.callId);
  }
  return ids;
}
