/** Upstream Chat Completions SSE frames → internal events (protocols §3.6, §5.10 "C upstream"), read through ./wire.ts. */
import type { IREvent } from "../../ir/events.ts";
import type { JsonObject } from "../../util/json.ts";
import type { SseFrame, StreamDecoder } from "../codec.ts";
import { parseFrameJson, readWire } from "../wire_frame.ts";
import { fromChatFinishReason } from "./finish_reason.ts";
import { citesUrl, searchesOf } from "./url_citation.ts";
import { fromChatUsage } from "./usage.ts";
import { type ChunkChoice, ChunkHead, ErrorBody, readChunk, type ToolCallDelta } from "./wire.ts";

/** Parses one `data:` payload that is not `[DONE]` (throws UpstreamProtocolError, ../wire_frame.ts). */
export function parseChunk(data: string): JsonObject {
  return parseFrameJson("openai_chat", data);
}

/** Id for an upstream tool call that came without one: stable per response, unique within it. */
export function fallbackCallId(responseId: string, index: number): string {
  const base = responseId.replace(/[^a-zA-Z0-9_-]/g, "");
  return base === "" ? `call_${index}` : `call_${base}_${index}`;
}

/** An in-band error body → the IR error (any shape ends the stream; a bare string is the message). */
function errorEvent(e: unknown): IREvent {
  const parsed = ErrorBody.safeParse(e);
  const err = parsed.success ? parsed.data : {};
  const ev: Extract<IREvent, { type: "error" }> = {
    type: "error",
    message: err.message ?? (typeof e === "string" ? e : "upstream stream error"),
  };
  if (err.type !== undefined) ev.upstreamType = err.type;
  if (err.code !== undefined) ev.upstreamCode = err.code;
  if (err.status !== undefined) ev.status = err.status;
  return ev;
}

/** Stateful decoder. `pushChunk` takes an already-parsed chunk so the relay can share one parse. */
export class ChatStreamDecoder implements StreamDecoder {
  #started = false;
  #id = "";
  #closed = false;
  #finishReason: unknown = null;
  #refusal = false;
  /** upstream tool-call index → internal index (counting tool calls only). */
  #tools = new Map<number, number>();
  /** Web searches as the last usage counted them; whether a delta cited a page (url_citation.ts). */
  #searches = 0;
  #cited = false;
  /** A usage chunk was seen: a citation after it is reported on its own usage event. */
  #reported = false;

  push(frame: SseFrame): IREvent[] {
    if (frame.data === "[DONE]") return this.pushDone();
    if (frame.data.trim() === "") return [];
    return this.pushChunk(parseChunk(frame.data));
  }

  pushDone(): IREvent[] {
    if (this.#closed || !this.#started) return [];
    return this.#finish();
  }

  end(): IREvent[] {
    if (this.#closed || this.#finishReason === null) return [];
    return this.#finish();
  }

  /** One parsed chunk; throws UpstreamProtocolError when the fields the decoder reads have another shape. */
  pushChunk(raw: JsonObject): IREvent[] {
    if (this.#closed) return [];
    const out: IREvent[] = [];
    if (raw.error !== undefined && raw.error !== null) {
      this.#closed = true;
      return [errorEvent(raw.error)];
    }
    const chunk = readChunk(raw); // hot path: a hand-written guard, see wire.ts
    if (!this.#started) {
      const head = readWire("openai_chat", "chunk", ChunkHead, raw);
      this.#started = true;
      this.#id = head.id ?? "";
      out.push({ type: "start", id: this.#id, model: head.model ?? "" });
    }
    const choice = chunk.choice;
    if (choice) {
      if (choice.delta) this.#delta(choice.delta, out);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
        this.#finishReason = choice.finish_reason;
      }
    }
    if (chunk.usage) {
      const usage = fromChatUsage(chunk.usage);
      if (usage.webSearchRequests !== undefined) this.#searches = usage.webSearchRequests;
      if (this.#cited) usage.webSearchRequests = searchesOf(this.#searches, true);
      this.#reported = true;
      out.push({ type: "usage", usage });
    }
    return out;
  }

  #delta(delta: NonNullable<ChunkChoice["delta"]>, out: IREvent[]): void {
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) out.push({ type: "reasoning_delta", text: reasoning });
    if (delta.content) out.push({ type: "text_delta", text: delta.content });
    if (delta.refusal) {
      this.#refusal = true;
      out.push({ type: "text_delta", text: delta.refusal });
    }
    delta.tool_calls?.forEach((tc, pos) => this.#toolFragment(tc, pos, out));
    if (!this.#cited && citesUrl(delta.annotations)) {
      this.#cited = true;
      // Before any usage the count waits for it: a usage event of its own would read as reported usage.
      if (this.#reported) {
        out.push({ type: "usage", usage: { webSearchRequests: searchesOf(this.#searches, true) } });
      }
    }
  }

  #toolFragment(tc: ToolCallDelta, pos: number, out: IREvent[]): void {
    const upstreamIndex = tc.index ?? pos;
    let index = this.#tools.get(upstreamIndex);
    if (index === undefined) {
      index = this.#tools.size;
      this.#tools.set(upstreamIndex, index);
      const id = tc.id ? tc.id : fallbackCallId(this.#id, index);
      out.push({ type: "tool_call_start", index, id, name: tc.function?.name ?? "" });
    }
    const args = tc.function?.arguments;
    if (args) out.push({ type: "tool_call_delta", index, arguments: args });
  }

  #finish(): IREvent[] {
    this.#closed = true;
    const reason = this.#refusal && (this.#finishReason === null || this.#finishReason === "stop")
      ? "content_filter"
      : fromChatFinishReason(this.#finishReason, this.#tools.size > 0);
    return [{ type: "finish", reason }];
  }
}

export function createStreamDecoder(): ChatStreamDecoder {
  return new ChatStreamDecoder();
}
