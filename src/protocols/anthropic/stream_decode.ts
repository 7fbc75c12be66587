/**
 * Upstream Messages SSE frames → internal events (§2.7). Blocks are tracked by their explicit `index`;
 * tool calls are numbered among client `tool_use` blocks only; server-tool blocks are skipped.
 */
import type { IREvent, IRStopReason } from "../../ir/events.ts";
import type { SseFrame, StreamDecoder } from "../codec.ts";
import { fromAnthropicStopReason } from "./stop_reason.ts";
import { type AnthropicUsageFields, mergeAnthropicUsage, readAnthropicUsage, toIRUsage } from "./usage.ts";

type Json = Record<string, unknown>;
type BlockKind = { kind: "text" } | { kind: "thinking" } | { kind: "tool"; tool: number } | { kind: "other" };

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

export class AnthropicStreamDecoder implements StreamDecoder {
  #started = false;
  #done = false;
  #blocks = new Map<number, BlockKind>();
  #tools = 0;
  #usage: AnthropicUsageFields = {};
  #stopReason: unknown = null;
  #stopSequence: string | undefined;

  push(frame: SseFrame): IREvent[] {
    if (this.#done) return [];
    let data: unknown;
    try {
      data = JSON.parse(frame.data);
    } catch {
      return [];
    }
    if (!isObject(data)) return [];
    const type = typeof data.type === "string" ? data.type : frame.event;
    const out: IREvent[] = [];
    switch (type) {
      case "message_start":
        this.#messageStart(isObject(data.message) ? data.message : {}, out);
        break;
      case "content_block_start":
        this.#ensureStarted(out);
        if (isObject(data.content_block)) this.#blockStart(Number(data.index), data.content_block, out);
        break;
      case "content_block_delta":
        this.#ensureStarted(out);
        if (isObject(data.delta)) this.#delta(this.#blocks.get(Number(data.index)), data.delta, out);
        break;
      case "message_delta":
        this.#ensureStarted(out);
        this.#messageDelta(data, out);
        break;
      case "message_stop":
        this.#ensureStarted(out);
        out.push(this.#finish());
        this.#done = true;
        break;
      case "error": {
        const err = isObject(data.error) ? data.error : {};
        const event: IREvent = { type: "error", message: str(err.message) || "upstream stream error" };
        if (typeof err.type === "string") event.upstreamType = err.type;
        out.push(event);
        this.#done = true;
        break;
      }
    }
    return out;
  }

  /** No `message_stop` means the stream failed: nothing to add. */
  end(): IREvent[] {
    return [];
  }

  #ensureStarted(out: IREvent[], id = "", model = ""): void {
    if (this.#started) return;
    this.#started = true;
    out.push({ type: "start", id, model });
  }

  #messageStart(message: Json, out: IREvent[]): void {
    this.#ensureStarted(out, str(message.id), str(message.model));
    this.#usageEvent(message.usage, out);
    // Some server-tool flows pre-populate the content; replay it as events.
    if (Array.isArray(message.content)) {
      message.content.forEach((b, i) => {
        if (!isObject(b)) return;
        this.#blockStart(-1 - i, b, out);
        if (b.type === "thinking" && str(b.signature)) {
          out.push({ type: "reasoning_signature", signature: str(b.signature) });
        }
        if (b.type === "tool_use" && isObject(b.input) && Object.keys(b.input).length > 0) {
          out.push({ type: "tool_call_delta", index: this.#tools - 1, arguments: JSON.stringify(b.input) });
        }
      });
    }
  }

  #blockStart(index: number, b: Json, out: IREvent[]): void {
    switch (b.type) {
      case "text":
        this.#blocks.set(index, { kind: "text" });
        if (str(b.text)) out.push({ type: "text_delta", text: str(b.text) });
        break;
      case "thinking":
        this.#blocks.set(index, { kind: "thinking" });
        if (str(b.thinking)) out.push({ type: "reasoning_delta", text: str(b.thinking) });
        break;
      case "tool_use": {
        const tool = this.#tools++;
        this.#blocks.set(index, { kind: "tool", tool });
        // The `input: {}` here is a placeholder: arguments come only from input_json_delta.
        out.push({ type: "tool_call_start", index: tool, id: str(b.id), name: str(b.name) });
        break;
      }
      default:
        this.#blocks.set(index, { kind: "other" });
    }
  }

  #delta(block: BlockKind | undefined, d: Json, out: IREvent[]): void {
    if (!block || block.kind === "other") return;
    switch (d.type) {
      case "text_delta":
        if (block.kind === "text" && str(d.text)) out.push({ type: "text_delta", text: str(d.text) });
        break;
      case "thinking_delta":
        if (block.kind === "thinking" && str(d.thinking)) {
          out.push({ type: "reasoning_delta", text: str(d.thinking) });
        }
        break;
      case "signature_delta":
        if (block.kind === "thinking" && str(d.signature)) {
          out.push({ type: "reasoning_signature", signature: str(d.signature) });
        }
        break;
      case "input_json_delta":
        if (block.kind === "tool" && str(d.partial_json)) {
          out.push({ type: "tool_call_delta", index: block.tool, arguments: str(d.partial_json) });
        }
        break;
    }
  }

  #messageDelta(data: Json, out: IREvent[]): void {
    const delta = isObject(data.delta) ? data.delta : {};
    if (typeof delta.stop_reason === "string") this.#stopReason = delta.stop_reason;
    if (typeof delta.stop_sequence === "string") this.#stopSequence = delta.stop_sequence;
    this.#usageEvent(data.usage, out);
  }

  #usageEvent(raw: unknown, out: IREvent[]): void {
    if (!isObject(raw)) return;
    mergeAnthropicUsage(this.#usage, readAnthropicUsage(raw));
    const usage = toIRUsage(this.#usage);
    if (Object.keys(usage).length > 0) out.push({ type: "usage", usage });
  }

  #finish(): IREvent {
    const reason: IRStopReason = fromAnthropicStopReason(this.#stopReason, this.#tools > 0);
    return this.#stopSequence !== undefined && reason === "stop_sequence"
      ? { type: "finish", reason, stopSequence: this.#stopSequence }
      : { type: "finish", reason };
  }
}

export function createStreamDecoder(): StreamDecoder {
  return new AnthropicStreamDecoder();
}
