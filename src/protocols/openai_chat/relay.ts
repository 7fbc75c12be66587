/**
 * Native pass-through of a Chat Completions stream (client surface == upstream protocol). Frames go
 * out byte-identical unless the spec requires a change; the same parsed chunk also feeds a
 * ChatStreamDecoder so the engine can meter usage and see the finish/error from `events()`.
 */
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import type { EncodeContext, Relay, SseFrame } from "../codec.ts";
import { SSE_DONE, sseData } from "../sse.ts";
import { chatErrorFrames } from "./error.ts";
import { ChatStreamDecoder, parseChunk } from "./stream_decode.ts";

export class ChatRelay implements Relay {
  readonly #ctx: EncodeContext;
  readonly #decoder = new ChatStreamDecoder();
  #events: IREvent[] = [];
  #closed = false;

  constructor(ctx: EncodeContext) {
    this.#ctx = ctx;
  }

  /**
   * SSE text for the client ("" to drop). Changes: the usage-only chunk is dropped and `usage` keys
   * removed (when they carry numbers) if the client did not ask for usage; `model` is set to the client's model id. An
   * upstream `{"error":…}` chunk is not forwarded: it becomes an IR error event, and the engine
   * answers it with `error()` (gateway error object, no upstream details).
   */
  push(frame: SseFrame): string {
    if (this.#closed) return "";
    if (frame.data === "[DONE]") {
      this.#closed = true;
      this.#events.push(...this.#decoder.pushDone());
      return SSE_DONE;
    }
    if (frame.data.trim() === "") return "";
    const chunk = parseChunk(frame.data);
    let failed = false;
    for (const e of this.#decoder.pushChunk(chunk)) {
      this.#events.push(e);
      if (e.type === "error") failed = true;
    }
    if (failed) {
      this.#closed = true;
      return "";
    }
    const includeUsage = this.#ctx.request.includeUsage;
    const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0 &&
      chunk.usage !== undefined && chunk.usage !== null;
    if (usageOnly && !includeUsage) return "";
    // `"usage": null` carries no numbers and is valid on any chunk: leave those bytes alone.
    const dropUsage = !includeUsage && chunk.usage !== undefined && chunk.usage !== null;
    const renameModel = "model" in chunk && chunk.model !== this.#ctx.model;
    if (!dropUsage && !renameModel) return `data: ${frame.data}\n\n`;
    const copy = { ...chunk };
    if (dropUsage) delete copy.usage;
    if (renameModel) copy.model = this.#ctx.model;
    return sseData(copy);
  }

  /**
   * The upstream body ended. When a finish_reason was seen without `[DONE]`, the finish event is
   * queued for `events()` and `data: [DONE]` is returned for the client; otherwise "".
   */
  end(): string {
    if (this.#closed) return "";
    this.#closed = true;
    const pending = this.#decoder.end();
    this.#events.push(...pending);
    return pending.some((e) => e.type === "finish") ? SSE_DONE : "";
  }

  /** IR events of the frames pushed since the last call (cleared on read). */
  events(): IREvent[] {
    const out = this.#events;
    this.#events = [];
    return out;
  }

  error(err: ErrorObject): string {
    this.#closed = true;
    return chatErrorFrames(err);
  }
}

export function createRelay(ctx: EncodeContext): ChatRelay {
  return new ChatRelay(ctx);
}
