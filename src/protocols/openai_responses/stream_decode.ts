/** Upstream Responses SSE (§4.7) → IR events (§5.10 "R upstream → A or C client"). */
import { type SseFrame, type StreamDecoder, UpstreamProtocolError } from "../codec.ts";
import type { IREvent } from "../../ir/events.ts";
import { errorFromEvent, errorFromFailed } from "./error.ts";
import { outputBlocks } from "./response_decode.ts";
import { stopReasonFromStatus } from "./status.ts";
import { usageFromWire } from "./usage.ts";
import { isRecord, type JsonObject, num, str } from "./util.ts";

interface CallState {
  index: number;
  args: string;
}

export class ResponsesStreamDecoder implements StreamDecoder {
  private started = false;
  private done = false;
  private sawContent = false;
  private refused = false;
  private nextTool = 0;
  private readonly callsByItem = new Map<string, CallState>();
  private readonly callsByOutput = new Map<number, CallState>();
  private readonly texts = new Map<string, string>();
  /** Per reasoning item: which stream feeds it (summary or raw text) and the last part index seen. */
  private readonly reasoning = new Map<string, { kind: string; index: number }>();

  push(frame: SseFrame): IREvent[] {
    if (frame.data.trim() === "[DONE]") return []; // stray terminator from compatible servers
    let json: unknown;
    try {
      json = JSON.parse(frame.data);
    } catch {
      throw new UpstreamProtocolError("openai_responses: stream event is not JSON");
    }
    if (!isRecord(json)) throw new UpstreamProtocolError("openai_responses: stream event is not an object");
    return this.pushJson(json, frame.event);
  }

  /** One already-parsed event (the relay parses each frame once and feeds it here). */
  pushJson(data: JsonObject, event?: string): IREvent[] {
    if (this.done) return [];
    const type = str(data.type) ?? event ?? "";
    switch (type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        return this.start(data.response);
      case "response.output_item.added":
      case "response.output_item.done":
        return this.item(data);
      case "response.function_call_arguments.delta":
        return this.args(data, str(data.delta) ?? "", false);
      case "response.function_call_arguments.done":
        return this.args(data, str(data.arguments) ?? "", true);
      case "response.refusal.delta":
        this.refused = true;
        return this.text(data, str(data.delta) ?? "", false);
      case "response.output_text.delta":
        return this.text(data, str(data.delta) ?? "", false);
      case "response.output_text.done":
        return this.text(data, str(data.text) ?? "", true);
      case "response.reasoning_summary_text.delta":
        return this.think(data, "summary", num(data.summary_index) ?? 0);
      case "response.reasoning_text.delta":
        return this.think(data, "raw", num(data.content_index) ?? 0);
      case "response.completed":
      case "response.incomplete":
        return this.terminal(data, type === "response.completed" ? "completed" : "incomplete");
      case "response.failed":
        this.done = true;
        return [errorFromFailed(data)];
      case "error":
        this.done = true;
        return [errorFromEvent(data)];
      default:
        return []; // unknown and hosted-tool events are ignored
    }
  }

  end(): IREvent[] {
    return [];
  }

  private start(res: unknown): IREvent[] {
    if (this.started) return [];
    this.started = true;
    const r = isRecord(res) ? res : {};
    return [{ type: "start", id: str(r.id) ?? "", model: str(r.model) ?? "" }];
  }

  private content(events: IREvent[]): IREvent[] {
    if (events.length === 0) return events;
    this.sawContent = true;
    return [...this.start(undefined), ...events];
  }

  private lookup(data: JsonObject): CallState | undefined {
    const byItem = typeof data.item_id === "string" ? this.callsByItem.get(data.item_id) : undefined;
    const idx = num(data.output_index);
    return byItem ?? (idx === undefined ? undefined : this.callsByOutput.get(idx));
  }

  /** Emits what `full` adds to what was already streamed (servers that skip deltas send it only here). */
  private catchUp(call: CallState, full: string): IREvent[] {
    if (full.length <= call.args.length || !full.startsWith(call.args)) return [];
    const rest = full.slice(call.args.length);
    call.args = full;
    return [{ type: "tool_call_delta", index: call.index, arguments: rest }];
  }

  private item(data: JsonObject): IREvent[] {
    const item = data.item;
    if (!isRecord(item) || item.type !== "function_call") return [];
    const out: IREvent[] = [];
    let call = this.lookup({ item_id: item.id, output_index: data.output_index });
    if (!call) {
      call = { index: this.nextTool++, args: "" };
      if (typeof item.id === "string") this.callsByItem.set(item.id, call);
      const idx = num(data.output_index);
      if (idx !== undefined) this.callsByOutput.set(idx, call);
      const id = str(item.call_id) ?? str(item.id) ?? "";
      out.push({ type: "tool_call_start", index: call.index, id, name: str(item.name) ?? "" });
    }
    out.push(...this.catchUp(call, str(item.arguments) ?? ""));
    return this.content(out);
  }

  private args(data: JsonObject, text: string, isDone: boolean): IREvent[] {
    const call = this.lookup(data);
    if (!call || text === "") return [];
    if (isDone) return this.content(this.catchUp(call, text));
    call.args += text;
    return this.content([{ type: "tool_call_delta", index: call.index, arguments: text }]);
  }

  private text(data: JsonObject, text: string, isDone: boolean): IREvent[] {
    const key = `${str(data.item_id) ?? num(data.output_index) ?? ""}:${num(data.content_index) ?? 0}`;
    const seen = this.texts.get(key) ?? "";
    let delta = text;
    if (isDone) {
      if (text.length <= seen.length || !text.startsWith(seen)) return [];
      delta = text.slice(seen.length);
    }
    if (delta === "") return [];
    this.texts.set(key, seen + delta);
    return this.content([{ type: "text_delta", text: delta }]);
  }

  private think(data: JsonObject, kind: string, index: number): IREvent[] {
    const delta = str(data.delta) ?? "";
    const key = str(data.item_id) ?? String(num(data.output_index) ?? "");
    const prev = this.reasoning.get(key);
    if (delta === "" || (prev && prev.kind !== kind)) return [];
    this.reasoning.set(key, { kind, index });
    const sep = prev && prev.index !== index ? "\n\n" : "";
    return this.content([{ type: "reasoning_delta", text: sep + delta }]);
  }

  private terminal(data: JsonObject, status: "completed" | "incomplete"): IREvent[] {
    this.done = true;
    const res = isRecord(data.response) ? data.response : {};
    const out: IREvent[] = [...this.start(res)];
    const output = Array.isArray(res.output) ? res.output : [];
    const { blocks, refused } = outputBlocks(output);
    if (!this.sawContent) {
      // A server that sent only the terminal event: take the content from its output[].
      for (const b of blocks) {
        if (b.type === "text") out.push({ type: "text_delta", text: b.text });
        else if (b.type === "reasoning") out.push({ type: "reasoning_delta", text: b.text });
        else {
          const index = this.nextTool++;
          out.push({ type: "tool_call_start", index, id: b.id, name: b.name });
          out.push({ type: "tool_call_delta", index, arguments: b.arguments });
        }
      }
    }
    const usage = usageFromWire(res.usage);
    if (usage) out.push({ type: "usage", usage });
    const hasTools = this.nextTool > 0 || blocks.some((b) => b.type === "tool_call");
    const reason = stopReasonFromStatus(status, res.incomplete_details, hasTools, this.refused || refused);
    out.push({ type: "finish", reason });
    return out;
  }
}

export function createStreamDecoder(): StreamDecoder {
  return new ResponsesStreamDecoder();
}
