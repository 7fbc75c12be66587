/**
 * Anthropic allows one open content block at a time, indexed 0, 1, … in order (protocols §2.7). Upstreams may
 * interleave argument fragments of several tool calls (Chat Completions does): the first open tool
 * block streams; arguments of other calls are buffered and flushed as complete blocks (start, one
 * input_json_delta, stop) when their turn comes or at the end (protocols §6 pitfall 10).
 */
import { sseEvent } from "../sse.ts";

type Open = { kind: "text" } | { kind: "thinking" } | { kind: "tool"; tool: number };

interface Tool {
  id: string;
  name: string;
  buffer: string;
  state: "pending" | "open" | "done";
}

export class BlockWriter {
  #next = 0;
  #open: Open | undefined;
  #tools = new Map<number, Tool>();

  text(text: string): string {
    if (!text) return "";
    const head = this.#open?.kind === "text"
      ? ""
      : this.#openBlock({ kind: "text" }, { type: "text", text: "" });
    return head + this.#delta({ type: "text_delta", text });
  }

  thinking(text: string): string {
    if (!text) return "";
    return this.#ensureThinking() + this.#delta({ type: "thinking_delta", thinking: text });
  }

  /** A signature belongs to the open thinking block; without one it gets an empty thinking block. */
  signature(signature: string): string {
    if (!signature) return "";
    return this.#ensureThinking() + this.#delta({ type: "signature_delta", signature });
  }

  toolStart(index: number, id: string, name: string): string {
    if (this.#tools.has(index)) return "";
    this.#tools.set(index, { id, name, buffer: "", state: "pending" });
    return this.#open?.kind === "tool" ? "" : this.#openTool(index);
  }

  toolDelta(index: number, args: string): string {
    const tool = this.#tools.get(index);
    if (!tool || !args || tool.state === "done") return "";
    if (tool.state === "open") return this.#delta({ type: "input_json_delta", partial_json: args });
    tool.buffer += args;
    // A pending call whose turn has come (no other tool block open) opens now and streams on.
    return this.#open?.kind === "tool" ? "" : this.#openTool(index);
  }

  /** Closes the open block and flushes every buffered tool call in index order. */
  finish(): string {
    let out = this.#close();
    const pending = [...this.#tools.entries()].filter(([, t]) => t.state === "pending").sort((a, b) =>
      a[0] - b[0]
    );
    for (const [index] of pending) out += this.#openTool(index) + this.#close();
    return out;
  }

  #ensureThinking(): string {
    if (this.#open?.kind === "thinking") return "";
    return this.#openBlock({ kind: "thinking" }, { type: "thinking", thinking: "", signature: "" });
  }

  #openTool(index: number): string {
    const tool = this.#tools.get(index)!;
    const start = this.#openBlock({ kind: "tool", tool: index }, {
      type: "tool_use",
      id: tool.id,
      name: tool.name,
      input: {},
    });
    tool.state = "open";
    const buffered = tool.buffer;
    tool.buffer = "";
    return start + (buffered ? this.#delta({ type: "input_json_delta", partial_json: buffered }) : "");
  }

  #openBlock(open: Open, block: Record<string, unknown>): string {
    const closed = this.#close();
    this.#open = open;
    return closed +
      sseEvent("content_block_start", {
        type: "content_block_start",
        index: this.#next,
        content_block: block,
      });
  }

  #delta(delta: Record<string, unknown>): string {
    return sseEvent("content_block_delta", { type: "content_block_delta", index: this.#next, delta });
  }

  #close(): string {
    if (!this.#open) return "";
    if (this.#open.kind === "tool") this.#tools.get(this.#open.tool)!.state = "done";
    this.#open = undefined;
    return sseEvent("content_block_stop", { type: "content_block_stop", index: this.#next++ });
  }
}
