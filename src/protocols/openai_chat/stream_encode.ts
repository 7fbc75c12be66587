/**
 * Internal events → Chat Completions SSE for the client (protocols §3.6, §5.10 "→ C client"). A provider-run
 * tool has no Chat form (protocols §5.3) and is not shown. Citations are collected and sent once, as
 * `delta.annotations` on one chunk of their own right before the finishing chunk, the whole list at once, as
 * OpenAI's search models do: the official SDK's stream helper replaces `message.annotations` with each
 * chunk's list, so a list per cited block would keep only the last one.
 */
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { emptyUsage, mergeUsage } from "../../ir/usage.ts";
import type { EncodeContext, StreamEncoder } from "../codec.ts";
import { SSE_DONE, sseData } from "../sse.ts";
import { chatErrorFrames } from "./error.ts";
import { toChatFinishReason } from "./finish_reason.ts";
import { chatAnnotations } from "./url_citation.ts";
import { toChatUsage } from "./usage.ts";

type Delta = Record<string, unknown>;

export class ChatStreamEncoder implements StreamEncoder {
  readonly #ctx: EncodeContext;
  readonly #id: string;
  readonly #created: number;
  #started = false;
  #done = false;
  #usage = emptyUsage();
  /** Tool-call index → whether any non-empty argument fragment was sent. */
  #toolArgs = new Map<number, boolean>();
  /** UTF-16 length of the content sent so far, and the annotations over it. */
  #textLength = 0;
  #annotations: Record<string, unknown>[] = [];

  constructor(ctx: EncodeContext) {
    this.#ctx = ctx;
    this.#id = ctx.newId("chatcmpl-");
    this.#created = ctx.now();
  }

  push(event: IREvent): string {
    // An upstream error is rendered by the engine through error() with a gateway ErrorObject.
    if (this.#done || event.type === "error") return "";
    let out = "";
    if (!this.#started) {
      this.#started = true;
      out += this.#chunk({ role: "assistant", content: "" });
    }
    switch (event.type) {
      case "start":
      case "reasoning_signature":
      case "server_tool":
        return out;
      case "citations":
        this.#annotations.push(
          ...chatAnnotations(
            event.citations,
            Math.max(0, this.#textLength - event.textLength),
            this.#textLength,
          ),
        );
        return out;
      case "text_delta":
        this.#textLength += event.text.length;
        return event.text === "" ? out : out + this.#chunk({ content: event.text });
      case "reasoning_delta":
        return event.text === "" ? out : out + this.#chunk({ reasoning_content: event.text });
      case "tool_call_start":
        this.#toolArgs.set(event.index, false);
        return out + this.#chunk({
          tool_calls: [{
            index: event.index,
            id: event.id,
            type: "function",
            function: { name: event.name, arguments: "" },
          }],
        });
      case "tool_call_delta":
        if (event.arguments === "") return out;
        this.#toolArgs.set(event.index, true);
        return out +
          this.#chunk({ tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] });
      case "usage":
        mergeUsage(this.#usage, event.usage);
        return out;
      case "finish":
        return out + this.#finish(event.reason);
    }
  }

  error(err: ErrorObject): string {
    if (this.#done) return "";
    this.#done = true;
    return chatErrorFrames(err);
  }

  #finish(reason: Extract<IREvent, { type: "finish" }>["reason"]): string {
    this.#done = true;
    let out = "";
    // A call that never got an argument fragment would end with "" — strict parsers need "{}" (protocols §6 pitfall 7).
    for (const [index, sent] of this.#toolArgs) {
      if (!sent) out += this.#chunk({ tool_calls: [{ index, function: { arguments: "{}" } }] });
    }
    if (this.#annotations.length > 0) out += this.#chunk({ annotations: this.#annotations });
    out += this.#chunk({}, toChatFinishReason(reason, this.#toolArgs.size > 0));
    if (this.#ctx.request.includeUsage) {
      out += sseData({ ...this.#head(), choices: [], usage: toChatUsage(this.#usage) });
    }
    return out + SSE_DONE;
  }

  #head(): Record<string, unknown> {
    return { id: this.#id, object: "chat.completion.chunk", created: this.#created, model: this.#ctx.model };
  }

  #chunk(delta: Delta, finishReason: string | null = null): string {
    const chunk: Record<string, unknown> = {
      ...this.#head(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (this.#ctx.request.includeUsage) chunk.usage = null;
    return sseData(chunk);
  }
}

export function createStreamEncoder(ctx: EncodeContext): ChatStreamEncoder {
  return new ChatStreamEncoder(ctx);
}
