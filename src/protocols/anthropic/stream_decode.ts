/**
 * Upstream Messages SSE frames → internal events (protocols §2.7), read through ./wire.ts. Blocks
 * are tracked by their explicit `index`; tool calls are numbered among client `tool_use` blocks only.
 * A `server_tool_use` block collects its input (streamed like a tool's) and waits for its result block,
 * which arrives complete in its `content_block_start`: then one `server_tool` event goes out
 * (server_blocks.ts). A text block's citations (in its start, or `citations_delta`) go out as one
 * `citations` event at its `content_block_stop`, with the block's text length.
 */
import type { IRCitation, IREvent, IRStopReason } from "../../ir/events.ts";
import { type JsonObject, str } from "../../util/json.ts";
import type { SseFrame, StreamDecoder } from "../codec.ts";
import { parseFrameJson, readWire } from "../wire_frame.ts";
import { fromAnthropicStopReason } from "./stop_reason.ts";
import { type AnthropicUsageFields, mergeAnthropicUsage, readAnthropicUsage, toIRUsage } from "./usage.ts";
import {
  citation,
  citations,
  isServerToolResult,
  parseInput,
  type PendingCall,
  serverTool,
} from "./server_blocks.ts";
import {
  BlockStartFrame,
  BlockStopFrame,
  CitationsDelta,
  ErrorFrame,
  MessageDeltaFrame,
  MessageStartFrame,
  type MessageStartMessage,
  readBlockDelta,
  TextBlock,
  ThinkingBlock,
  ToolUseBlock,
} from "./wire.ts";

type BlockKind =
  /** `length`: UTF-16 units of text so far; `citations`: collected until the block stops. */
  | { kind: "text"; length: number; citations: IRCitation[] }
  | { kind: "thinking" }
  | { kind: "tool"; tool: number }
  /** A server_tool_use block: its streamed input JSON, parsed when the block stops. */
  | { kind: "server"; id: string; json: string }
  | { kind: "other" };

const read = <S extends Parameters<typeof readWire>[2]>(what: string, schema: S, json: unknown) =>
  readWire("anthropic", what, schema, json);

export class AnthropicStreamDecoder implements StreamDecoder {
  #started = false;
  #done = false;
  #blocks = new Map<number, BlockKind>();
  #tools = 0;
  /** server_tool_use calls waiting for their result block, by id. */
  #calls = new Map<string, PendingCall>();
  #usage: AnthropicUsageFields = {};
  #stopReason: unknown = null;
  #stopSequence: string | undefined;

  /** Throws UpstreamProtocolError on a malformed frame (../wire_frame.ts); ping and unknown types are ignored. */
  push(frame: SseFrame): IREvent[] {
    if (this.#done) return [];
    return this.pushJson(parseFrameJson("anthropic", frame.data), frame.event);
  }

  /** One frame already parsed to its JSON object (the relay parses each frame once and feeds it here). */
  pushJson(data: JsonObject, event?: string): IREvent[] {
    if (this.#done) return [];
    const type = str(data.type) ?? event;
    const out: IREvent[] = [];
    switch (type) {
      case "message_start":
        this.#messageStart(read(type, MessageStartFrame, data).message, out);
        break;
      case "content_block_start": {
        const f = read(type, BlockStartFrame, data);
        this.#ensureStarted(out);
        this.#blockStart(f.index, f.content_block, out);
        break;
      }
      case "content_block_delta": {
        const d = readBlockDelta(data); // hot path: a hand-written guard, see wire.ts
        this.#ensureStarted(out);
        const block = this.#blocks.get(d.index);
        if (d.type === "citations_delta") {
          const c = citation(read(type, CitationsDelta, data.delta).citation);
          if (c && block?.kind === "text") block.citations.push(c);
        } else this.#delta(block, d.type, d.text, out);
        break;
      }
      case "content_block_stop":
        this.#ensureStarted(out);
        this.#blockStop(read(type, BlockStopFrame, data).index, out);
        break;
      case "message_delta": {
        const f = read(type, MessageDeltaFrame, data);
        this.#ensureStarted(out);
        if (typeof f.delta.stop_reason === "string") this.#stopReason = f.delta.stop_reason;
        if (typeof f.delta.stop_sequence === "string") this.#stopSequence = f.delta.stop_sequence;
        this.#usageEvent(f.usage, out);
        break;
      }
      case "message_stop":
        this.#ensureStarted(out);
        out.push(this.#finish());
        this.#done = true;
        break;
      case "error": {
        const err = read(type, ErrorFrame, data).error;
        const event: IREvent = { type: "error", message: err?.message || "upstream stream error" };
        if (err?.type !== undefined) event.upstreamType = err.type;
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

  #messageStart(message: MessageStartMessage, out: IREvent[]): void {
    this.#ensureStarted(out, message.id ?? "", message.model ?? "");
    this.#usageEvent(message.usage, out);
    // Some server-tool flows pre-populate the content; replay it as events.
    message.content?.forEach((b, i) => {
      this.#blockStart(-1 - i, b, out);
      this.#blockStop(-1 - i, out); // a pre-populated block is complete
      if (b.type === "thinking") {
        const signature = read("message_start thinking block", ThinkingBlock, b).signature;
        if (signature) out.push({ type: "reasoning_signature", signature });
      }
      if (b.type === "tool_use") {
        const input = read("message_start tool_use block", ToolUseBlock, b).input;
        if (input && Object.keys(input).length > 0) {
          out.push({ type: "tool_call_delta", index: this.#tools - 1, arguments: JSON.stringify(input) });
        }
      }
    });
  }

  #blockStart(index: number, b: JsonObject & { type: string }, out: IREvent[]): void {
    switch (b.type) {
      case "text": {
        const t = read("text block", TextBlock, b);
        this.#blocks.set(index, {
          kind: "text",
          length: t.text?.length ?? 0,
          citations: citations(t.citations),
        });
        if (t.text) out.push({ type: "text_delta", text: t.text });
        break;
      }
      case "thinking": {
        this.#blocks.set(index, { kind: "thinking" });
        const thinking = read("thinking block", ThinkingBlock, b).thinking;
        if (thinking) out.push({ type: "reasoning_delta", text: thinking });
        break;
      }
      case "tool_use": {
        const block = read("tool_use block", ToolUseBlock, b);
        const tool = this.#tools++;
        this.#blocks.set(index, { kind: "tool", tool });
        // The `input: {}` here is a placeholder: arguments come only from input_json_delta.
        out.push({ type: "tool_call_start", index: tool, id: block.id, name: block.name });
        break;
      }
      case "server_tool_use": {
        const block = read("server_tool_use block", ToolUseBlock, b);
        this.#blocks.set(index, { kind: "server", id: block.id, json: "" });
        this.#calls.set(block.id, { name: block.name, input: block.input ?? {} });
        break;
      }
      default:
        this.#blocks.set(index, { kind: "other" });
        if (isServerToolResult(b.type)) out.push({ type: "server_tool", ...serverTool(b, this.#calls) });
    }
  }

  #blockStop(index: number, out: IREvent[]): void {
    const block = this.#blocks.get(index);
    if (block?.kind === "text" && block.citations.length > 0) {
      out.push({ type: "citations", textLength: block.length, citations: block.citations });
      block.citations = [];
    } else if (block?.kind === "server") {
      const call = this.#calls.get(block.id);
      if (call) call.input = parseInput(block.json, call.input);
      block.json = "";
    }
  }

  /** Deltas of the four known types carry their text; other types are ignored (citations_delta: above). */
  #delta(block: BlockKind | undefined, type: string, text: string | undefined, out: IREvent[]): void {
    if (!block || block.kind === "other" || !text) return;
    if (type === "text_delta" && block.kind === "text") {
      block.length += text.length;
      out.push({ type: "text_delta", text });
    } else if (type === "input_json_delta" && block.kind === "server") block.json += text;
    else if (type === "thinking_delta" && block.kind === "thinking") {
      out.push({ type: "reasoning_delta", text });
    } else if (type === "signature_delta" && block.kind === "thinking") {
      out.push({ type: "reasoning_signature", signature: text });
    } else if (type === "input_json_delta" && block.kind === "tool") {
      out.push({ type: "tool_call_delta", index: block.tool, arguments: text });
    }
  }

  #usageEvent(raw: JsonObject | null | undefined, out: IREvent[]): void {
    if (!raw) return;
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
