/** Internal events → the Messages SSE event sequence for Anthropic clients (protocols §2.7 emission rules). */
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { emptyUsage, mergeUsage } from "../../ir/usage.ts";
import type { EncodeContext, StreamEncoder } from "../codec.ts";
import { sseEvent } from "../sse.ts";
import { BlockWriter } from "./block_writer.ts";
import { errorFrame } from "./error.ts";
import { toAnthropicStopReason } from "./stop_reason.ts";
import { sanitizeToolId } from "./tool_id.ts";
import { usageToAnthropic } from "./usage.ts";

export class AnthropicStreamEncoder implements StreamEncoder {
  readonly #ctx: EncodeContext;
  readonly #blocks = new BlockWriter();
  readonly #usage = emptyUsage();
  #started = false;
  #ended = false;

  constructor(ctx: EncodeContext) {
    this.#ctx = ctx;
  }

  push(event: IREvent): string {
    if (this.#ended) return "";
    // message_start is held until the next event, so an input count reported right after can ride on it.
    if (event.type === "start") return "";
    if (event.type === "usage") {
      mergeUsage(this.#usage, event.usage);
      return this.#messageStart();
    }
    if (event.type === "error") return ""; // the engine renders it through error()
    const head = this.#messageStart();
    switch (event.type) {
      case "text_delta":
        return head + this.#blocks.text(event.text);
      case "reasoning_delta":
        return head + this.#blocks.thinking(event.text);
      case "reasoning_signature":
        return head + this.#blocks.signature(event.signature);
      case "tool_call_start": {
        const id = event.id ? sanitizeToolId(event.id) : this.#ctx.newId("toolu_");
        return head + this.#blocks.toolStart(event.index, id, event.name);
      }
      case "tool_call_delta":
        return head + this.#blocks.toolDelta(event.index, event.arguments);
      case "server_tool":
      case "citations":
        // Only an Anthropic upstream produces them, and its Messages clients are relayed natively: a
        // translated Messages stream has none to show.
        return head;
      case "finish": {
        this.#ended = true;
        const delta = {
          type: "message_delta",
          delta: {
            stop_reason: toAnthropicStopReason(event.reason),
            stop_sequence: event.stopSequence ?? null,
          },
          usage: usageToAnthropic(this.#usage),
        };
        return head + this.#blocks.finish() + sseEvent("message_delta", delta) +
          sseEvent("message_stop", { type: "message_stop" });
      }
    }
  }

  error(err: ErrorObject): string {
    this.#ended = true;
    return errorFrame(err);
  }

  /** message_start, once, when it is due (also when `start` never came: the frame order stays valid). */
  #messageStart(): string {
    if (this.#started) return "";
    this.#started = true;
    const u = usageToAnthropic(this.#usage);
    return sseEvent("message_start", {
      type: "message_start",
      message: {
        id: this.#ctx.newId("msg_"),
        type: "message",
        role: "assistant",
        model: this.#ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          // Before the upstream reports input (a translated stream), Claude Code and others read the
          // estimate here; message_delta carries the real count at the end.
          input_tokens: this.#usage.inputTokens > 0 ? u.input_tokens : this.#ctx.inputEstimate ?? 0,
          cache_creation_input_tokens: u.cache_creation_input_tokens,
          cache_read_input_tokens: u.cache_read_input_tokens,
          output_tokens: 0,
        },
      },
    });
  }
}

export function createStreamEncoder(ctx: EncodeContext): StreamEncoder {
  return new AnthropicStreamEncoder(ctx);
}
