/**
 * One keyed request running in this process (docs/idempotency.md): its answer is read by the run itself, not by
 * the client, and kept (within the bounds) so that every client of the key — the first and any retry — gets
 * the whole answer from its first byte, then the rest live. A run no client listens to is cancelled after
 * the detach time, as a client's cut; until then a retry attaches to it.
 */
import type { StoredAnswerHead } from "../store/store.ts";
import type { ByteBudget } from "./byte_budget.ts";
import { concatBytes } from "../util/bytes.ts";

/** How a run ended: its answer kept whole (replayable) or not (over a bound). */
export interface RunEnd {
  head: StoredAnswerHead;
  /** The whole body, or null when it was not kept. */
  body: Uint8Array | null;
}

interface Listener {
  queue: Uint8Array[];
  queued: number;
  wake: (() => void) | null;
  error: unknown;
}

export class KeyedRun {
  /** The run's own signal, in place of the client's: aborted only when no client is left (detach). */
  readonly abort = new AbortController();
  #head: StoredAnswerHead | null = null;
  #chunks: Uint8Array[] | null = [];
  #bytes = 0;
  #ended = false;
  #failure: { err: unknown } | null = null;
  readonly #listeners = new Set<Listener>();
  /** Clients waiting for the head (a JSON answer still running, a stream before its 200). */
  #waiting = 0;
  #detach: ReturnType<typeof setTimeout> | undefined;
  #headKnown!: () => void;
  readonly #headPromise = new Promise<void>((r) => this.#headKnown = r);
  #endKnown!: (end: RunEnd | null) => void;
  /** Resolves when the answer ended (null: the run failed before any answer). */
  readonly ended = new Promise<RunEnd | null>((r) => this.#endKnown = r);
  #source: ReadableStreamDefaultReader<Uint8Array> | null = null;

  constructor(
    readonly fingerprint: string,
    private readonly limits: { detachMs: number; maxBytes: number; budget: ByteBudget },
  ) {}

  /** Whether a retry can still be given the whole answer. */
  get replayable(): boolean {
    return this.#chunks !== null;
  }

  /**
   * A client of the run until `clientGone` aborts: resolves with its answer once the head is known (the
   * answer: every byte so far, then the rest live), or rejects with the run's failure; null when the answer is
   * not kept whole any more (over a bound) — for a retry, never for the first client.
   */
  async attach(
    clientGone: AbortSignal,
    first: boolean,
  ): Promise<{ head: StoredAnswerHead; body: ReadableStream<Uint8Array> | Uint8Array } | null> {
    this.#clearDetach();
    if (this.#head === null && this.#failure === null) await this.#awaitHead(clientGone);
    if (this.#failure) throw this.#failure.err;
    if (!first && this.#chunks === null) {
      this.#leave();
      return null;
    }
    const head = this.#head!;
    const body = this.#listen();
    if (head.stream) return { head, body };
    // A JSON answer is whole once its head is known: given as bytes once read (a fixed length, no chunked
    // answer), unless it was not kept whole — then its listener has every byte.
    const end = await this.ended;
    if (!end?.body) return { head, body };
    await body.cancel();
    return { head, body: end.body };
  }

  /** Waits for the head as one of the waiting clients; a client that leaves meanwhile counts as gone. */
  async #awaitHead(clientGone: AbortSignal): Promise<void> {
    this.#waiting++;
    let left = false;
    try {
      await new Promise<void>((resolve, reject) => {
        const onGone = () => {
          left = true;
          reject(clientGone.reason);
        };
        if (clientGone.aborted) return onGone();
        clientGone.addEventListener("abort", onGone, { once: true });
        void this.#headPromise.then(() => {
          clientGone.removeEventListener("abort", onGone);
          resolve();
        });
      });
    } finally {
      this.#waiting--;
      if (left) this.#leave();
    }
  }

  /** The answer's head and body: read from here on by the run (the pump), never by a client directly. */
  start(head: StoredAnswerHead, body: ReadableStream<Uint8Array> | null): void {
    this.#head = head;
    this.#headKnown();
    if (body === null) return this.#finish();
    this.#source = body.getReader();
    void this.#pump();
  }

  /** The run failed before it had an answer: every waiting client gets `err`. */
  fail(err: unknown): void {
    this.#failure = { err };
    this.#headKnown();
    this.#ended = true;
    this.#endKnown(null);
    this.#clearDetach();
  }

  async #pump(): Promise<void> {
    const source = this.#source!;
    try {
      for (;;) {
        const { done, value } = await source.read();
        if (done) break;
        this.#append(value);
      }
    } catch (err) {
      // The source errored (a runtime fault): the clients get the error; the answer is not kept.
      this.#drop();
      for (const l of this.#listeners) l.error = err;
    }
    // Cancelled with no client left: what ran is billed as a cut stream, and is no whole answer to keep.
    if (this.abort.signal.aborted) this.#drop();
    this.#finish();
  }

  #append(chunk: Uint8Array): void {
    if (this.#chunks !== null) {
      if (
        this.#bytes + chunk.byteLength > this.limits.maxBytes || !this.limits.budget.take(chunk.byteLength)
      ) {
        this.#drop();
      } else {
        this.#chunks.push(chunk);
        this.#bytes += chunk.byteLength;
      }
    }
    let cut = false;
    for (const l of this.#listeners) {
      l.queue.push(chunk);
      l.queued += chunk.byteLength;
      // A client that stops reading is not given unbounded memory: it is cut, as a client that left — its
      // queue dropped and no more queued for it now, not at its next read (a stalled client never reads).
      if (l.queued > this.limits.maxBytes) {
        l.error = new Error("the client does not read its answer");
        l.queue = [];
        l.queued = 0;
        this.#listeners.delete(l);
        cut = true;
      }
      l.wake?.();
    }
    if (cut) this.#leave();
  }

  /** The answer is over a bound: what was kept goes, and no retry is given a part of it. */
  #drop(): void {
    if (this.#chunks === null) return;
    this.limits.budget.give(this.#bytes);
    this.#chunks = null;
  }

  #finish(): void {
    this.#ended = true;
    this.#clearDetach();
    const chunks = this.#chunks;
    const body = chunks === null ? null : concatBytes(chunks);
    this.#endKnown({ head: { ...this.#head!, bytes: body?.byteLength ?? 0 }, body });
    for (const l of this.#listeners) l.wake?.();
  }

  /** Gives the kept bytes back to the process's budget once the answer is stored (or given up). */
  release(): void {
    this.#drop();
  }

  #listen(): ReadableStream<Uint8Array> {
    // What was kept so far is the client's to read first, and counts in its queue.
    const kept = this.#chunks;
    const l: Listener = {
      queue: kept ? [...kept] : [],
      queued: kept ? this.#bytes : 0,
      wake: null,
      error: null,
    };
    this.#listeners.add(l);
    return new ReadableStream<Uint8Array>({
      pull: async (c) => {
        for (;;) {
          if (l.error) {
            this.#listeners.delete(l);
            return c.error(l.error);
          }
          const chunk = l.queue.shift();
          if (chunk) {
            l.queued -= chunk.byteLength;
            return c.enqueue(chunk);
          }
          if (this.#ended) {
            this.#listeners.delete(l);
            return c.close();
          }
          await new Promise<void>((r) => l.wake = r);
          l.wake = null;
        }
      },
      cancel: () => {
        this.#listeners.delete(l);
        this.#leave();
      },
    }, { highWaterMark: 0 });
  }

  /** A client left: with none left, the run is cancelled after the detach time unless one comes back. */
  #leave(): void {
    if (this.#ended || this.#listeners.size > 0 || this.#waiting > 0 || this.#detach !== undefined) return;
    this.#detach = setTimeout(() => {
      this.#detach = undefined;
      if (this.#listeners.size > 0 || this.#waiting > 0) return;
      this.abort.abort(new DOMException("no client left", "AbortError"));
      this.#source?.cancel().catch(() => {});
    }, this.limits.detachMs);
  }

  #clearDetach(): void {
    if (this.#detach !== undefined) clearTimeout(this.#detach);
    this.#detach = undefined;
  }
}
