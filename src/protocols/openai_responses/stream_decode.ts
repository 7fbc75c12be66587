/**
 * Upstream Responses SSE (protocols §4.7) → IR events (protocols §5.10 "R upstream → A or C
 * client"), each handled event read through ./wire.ts.
 */
import type { SseFrame, StreamDecoder } from "../codec.ts";
import type { IREvent } from "../../ir/events.ts";
import { type JsonObject, str } from "../../util/json.ts";
import { parseFrameJson, readWire } from "../wire_frame.ts";
import { errorFromEvent, errorFromFailed } from "./error.ts";
import { outputBlocks } from "./response_decode.ts";
import { stopReasonFromStatus } from "./status.ts";
import { usageFromWire } from "./usage.ts";
import {
  FunctionCallItem,
  type Located,
  OutputItemFrame,
  readDelta,
  ResponseFrame,
  type ResponseObject,
} from "./wire.ts";

const read = <S extends Parameters<typeof readWire>[2]>(what: string, schema: S, json: unknown) =>
  readWire("openai_responses", what, schema, json);

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

  /** Throws UpstreamProtocolError on a malformed frame (../wire_frame.ts); unknown event types are ignored. */
  push(frame: SseFrame): IREvent[] {
    if (frame.data.trim() === "[DONE]") return []; // stray terminator from compatible servers
    return this.pushJson(parseFrameJson("openai_responses", frame.data), frame.event);
  }

  /** One already-parsed event (the relay parses each frame once and feeds it here). */
  pushJson(data: JsonObject, event?: string): IREvent[] {
    if (this.done) return [];
    const type = str(data.type) ?? event ?? "";
    switch (type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        return this.start(read(type, ResponseFrame, data).response);
      case "response.output_item.added":
      case "response.output_item.done":
        return this.item(read(type, OutputItemFrame, data));
      // Hot path: hand-written guards, see wire.ts readDelta.
      case "response.function_call_arguments.delta":
        return this.args(readDelta(data, type, "delta"), false);
      case "response.function_call_arguments.done":
        return this.args(readDelta(data, type, "arguments"), true);
      case "response.refusal.delta":
        this.refused = true;
        return this.text(readDelta(data, type, "delta"), false);
      case "response.output_text.delta":
        return this.text(readDelta(data, type, "delta"), false);
      case "response.output_text.done":
        return this.text(readDelta(data, type, "text"), true);
      case "response.reasoning_summary_text.delta": {
        const f = readDelta(data, type, "delta");
        return this.think(f, "summary", f.summary_index ?? 0);
      }
      case "response.reasoning_text.delta": {
        const f = readDelta(data, type, "delta");
        return this.think(f, "raw", f.content_index ?? 0);
      }
      case "response.completed":
      case "response.incomplete":
        return this.terminal(
          read(type, ResponseFrame, data).response,
          type === "response.completed" ? "completed" : "incomplete",
        );
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

  private start(res: { id?: string | null; model?: string | null } | undefined): IREvent[] {
    if (this.started) return [];
    this.started = true;
    return [{ type: "start", id: res?.id ?? "", model: res?.model ?? "" }];
  }

  private content(events: IREvent[]): IREvent[] {
    if (events.length === 0) return events;
    this.sawContent = true;
    return [...this.start(undefined), ...events];
  }

  private lookup(
    itemId: string | null | undefined,
    outputIndex: number | null | undefined,
  ): CallState | undefined {
    const byItem = typeof itemId === "string" ? this.callsByItem.get(itemId) : undefined;
    return byItem ?? (typeof outputIndex === "number" ? this.callsByOutput.get(outputIndex) : undefined);
  }

  /** Emits what `full` adds to what was already streamed (servers that skip deltas send it only here). */
  private catchUp(call: CallState, full: string): IREvent[] {
    if (full.length <= call.args.length || !full.startsWith(call.args)) return [];
    const rest = full.slice(call.args.length);
    call.args = full;
    return [{ type: "tool_call_delta", index: call.index, arguments: rest }];
  }

  private item(data: OutputItemFrame): IREvent[] {
    if (data.item.type !== "function_call") return [];
    const item = read("function_call item", FunctionCallItem, data.item);
    const out: IREvent[] = [];
    let call = this.lookup(item.id, data.output_index);
    if (!call) {
      call = { index: this.nextTool++, args: "" };
      if (typeof item.id === "string") this.callsByItem.set(item.id, call);
      if (typeof data.output_index === "number") this.callsByOutput.set(data.output_index, call);
      const id = item.call_id ?? item.id ?? "";
      out.push({ type: "tool_call_start", index: call.index, id, name: item.name ?? "" });
    }
    out.push(...this.catchUp(call, item.arguments ?? ""));
    return this.content(out);
  }

  private args(at: Located & { text: string }, isDone: boolean): IREvent[] {
    const text = at.text;
    const call = this.lookup(at.item_id, at.output_index);
    if (!call || text === "") return [];
    if (isDone) return this.content(this.catchUp(call, text));
    call.args += text;
    return this.content([{ type: "tool_call_delta", index: call.index, arguments: text }]);
  }

  private text(at: Located & { text: string }, isDone: boolean): IREvent[] {
    const text = at.text;
    const key = `${at.item_id ?? at.output_index ?? ""}:${at.content_index ?? 0}`;
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

  private think(at: Located & { text: string }, kind: string, index: number): IREvent[] {
    const delta = at.text;
    const key = at.item_id ?? String(at.output_index ?? "");
    const prev = this.reasoning.get(key);
    if (delta === "" || (prev && prev.kind !== kind)) return [];
    this.reasoning.set(key, { kind, index });
    const sep = prev && prev.index !== index ? "\n\n" : "";
    return this.content([{ type: "reasoning_delta", text: sep + delta }]);
  }

  private terminal(res: ResponseObject, status: "completed" | "incomplete"): IREvent[] {
    this.done = true;
    const out: IREvent[] = [...this.start(res)];
    const output = res.output ?? [];
    const { blocks, refused } = outputBlocks(output);
    if (!this.sawContent) {
      // A server that sent only the terminal event: take the content from its output[].
      for (const b of blocks) {
        if (b.type === "text") out.push({ type: "text_delta", text: b.text });
        else if (b.type === "reasoning") out.push({ type: "reasoning_delta", text: b.text });
        else if (b.type === "tool_call") {
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
