/** Upstream Chat Completions SSE frames → internal events (§3.6, §5.10 "C upstream"). */
import type { IREvent } from "../../ir/events.ts";
import { type SseFrame, type StreamDecoder, UpstreamProtocolError } from "../codec.ts";
import { fromChatFinishReason } from "./finish_reason.ts";
import { fromChatUsage } from "./usage.ts";
import { isObject, type Obj } from "./validate.ts";

/** Parses one `data:` payload that is not `[DONE]`. */
export function parseChunk(data: string): Obj {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new UpstreamProtocolError("chat stream chunk is not JSON");
  }
  if (!isObject(json)) throw new UpstreamProtocolError("chat stream chunk is not an object");
  return json;
}

/** Id for an upstream tool call that came without one: stable per response, unique within it. */
export function fallbackCallId(responseId: string, index: number): string {
  const base = responseId.replace(/[^a-zA-Z0-9_-]/g, "");
  return base === "" ? `call_${index}` : `call_${base}_${index}`;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
}

function errorEvent(e: unknown): IREvent {
  const err = isObject(e) ? e : {};
  const ev: Extract<IREvent, { type: "error" }> = {
    type: "error",
    message: str(err.message) ?? (typeof e === "string" ? e : "upstream stream error"),
  };
  const type = str(err.type);
  const code = str(err.code);
  if (type !== undefined) ev.upstreamType = type;
  if (code !== undefined) ev.upstreamCode = code;
  if (typeof err.status === "number") ev.status = err.status;
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

  pushChunk(chunk: Obj): IREvent[] {
    if (this.#closed) return [];
    const out: IREvent[] = [];
    if (chunk.error !== undefined && chunk.error !== null) {
      this.#closed = true;
      return [errorEvent(chunk.error)];
    }
    if (!this.#started) {
      this.#started = true;
      this.#id = str(chunk.id) ?? "";
      out.push({ type: "start", id: this.#id, model: str(chunk.model) ?? "" });
    }
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice = choices.find((c) => isObject(c) && (c.index ?? 0) === 0);
    if (isObject(choice)) {
      if (isObject(choice.delta)) this.#delta(choice.delta, out);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
        this.#finishReason = choice.finish_reason;
      }
    }
    if (isObject(chunk.usage)) out.push({ type: "usage", usage: fromChatUsage(chunk.usage) });
    return out;
  }

  #delta(delta: Obj, out: IREvent[]): void {
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") {
      out.push({ type: "reasoning_delta", text: reasoning });
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      out.push({ type: "text_delta", text: delta.content });
    }
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      this.#refusal = true;
      out.push({ type: "text_delta", text: delta.refusal });
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((tc, pos) => {
        if (isObject(tc)) this.#toolFragment(tc, pos, out);
      });
    }
  }

  #toolFragment(tc: Obj, pos: number, out: IREvent[]): void {
    const upstreamIndex = typeof tc.index === "number" ? tc.index : pos;
    const fn = isObject(tc.function) ? tc.function : {};
    let index = this.#tools.get(upstreamIndex);
    if (index === undefined) {
      index = this.#tools.size;
      this.#tools.set(upstreamIndex, index);
      const id = typeof tc.id === "string" && tc.id !== "" ? tc.id : fallbackCallId(this.#id, index);
      out.push({ type: "tool_call_start", index, id, name: typeof fn.name === "string" ? fn.name : "" });
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "") {
      out.push({ type: "tool_call_delta", index, arguments: fn.arguments });
    }
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
