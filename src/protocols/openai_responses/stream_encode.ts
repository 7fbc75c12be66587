/**
 * IR events → Responses SSE for a client (§4.7, §5.10 "X upstream → R client", pitfall 26).
 *
 * One output item is open at a time. Once a function_call item is open it stays open until
 * `finish`, because Chat upstreams may interleave argument fragments of several calls: later calls'
 * arguments and any content that follows are buffered and flushed in order at `finish`, each as a
 * complete item. So every call ends with its full arguments, whatever the interleaving.
 */
import type { EncodeContext, StreamEncoder } from "../codec.ts";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent, IRStopReason } from "../../ir/events.ts";
import { emptyUsage, mergeUsage } from "../../ir/usage.ts";
import { sseEvent } from "../sse.ts";
import {
  finalArguments,
  functionCallItem,
  type ItemStatus,
  messageItem,
  outputTextPart,
  reasoningItem,
} from "./items.ts";
import { type ResponseFields, responseObject, type ResponseStatus } from "./response_object.ts";
import { statusFromStopReason } from "./status.ts";
import { usageToWire } from "./usage.ts";

interface Call {
  callId: string;
  name: string;
  args: string;
}

type Open =
  | { kind: "message"; id: string; outputIndex: number; text: string }
  | { kind: "reasoning"; id: string; outputIndex: number; text: string }
  | { kind: "call"; id: string; outputIndex: number; call: Call };

type Deferred = { kind: "call"; call: Call } | { kind: "message" | "reasoning"; text: string };

type Fields = Record<string, unknown>;

class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private started = false;
  private ended = false;
  private id = "";
  private createdAt = 0;
  private readonly output: Fields[] = [];
  private open: Open | null = null;
  private readonly calls = new Map<number, Call>();
  /** Argument fragments that arrived before their tool_call_start. */
  private readonly orphanArgs = new Map<number, string>();
  private readonly deferred: Deferred[] = [];
  private readonly usage = emptyUsage();
  private sawUsage = false;

  constructor(private readonly ctx: EncodeContext) {}

  push(ev: IREvent): string {
    if (this.ended) return "";
    switch (ev.type) {
      case "start":
        return this.begin();
      case "text_delta":
        return this.begin() + this.content("message", ev.text);
      case "reasoning_delta":
        return this.begin() + this.content("reasoning", ev.text);
      case "tool_call_start":
        return this.begin() + this.callStart(ev.index, ev.id, ev.name);
      case "tool_call_delta":
        return this.begin() + this.callDelta(ev.index, ev.arguments);
      case "usage":
        mergeUsage(this.usage, ev.usage);
        this.sawUsage = true;
        return "";
      case "finish":
        return this.begin() + this.finish(ev.reason);
      default:
        // reasoning_signature: no Responses representation; error: the engine renders it via error().
        return "";
    }
  }

  error(err: ErrorObject): string {
    if (this.ended) return "";
    this.ended = true;
    this.ensureId();
    const output = [...this.output];
    if (this.open) output.push(this.snapshot(this.open, "incomplete"));
    return this.frame("error", {
      code: err.code,
      message: err.message,
      param: err.param,
      error: err,
      request_id: err.request_id,
    }) + this.frame("response.failed", {
      response: this.response("failed", {
        output,
        error: { code: err.code, message: err.message },
        usage: this.sawUsage ? usageToWire(this.usage) : null,
      }),
    });
  }

  private frame(type: string, fields: Fields): string {
    return sseEvent(type, { type, sequence_number: this.seq++, ...fields });
  }

  private ensureId(): void {
    if (this.id !== "") return;
    this.id = this.ctx.newId("resp_");
    this.createdAt = this.ctx.now();
  }

  private response(status: ResponseStatus, extra: Partial<ResponseFields> = {}): Fields {
    return responseObject(this.ctx, {
      id: this.id,
      createdAt: this.createdAt,
      status,
      output: [...this.output],
      usage: null,
      ...extra,
    });
  }

  private begin(): string {
    if (this.started) return "";
    this.started = true;
    this.ensureId();
    return this.frame("response.created", { response: this.response("in_progress") }) +
      this.frame("response.in_progress", { response: this.response("in_progress") });
  }

  private content(kind: "message" | "reasoning", text: string): string {
    if (text === "") return "";
    if (this.open?.kind === "call") {
      const last = this.deferred[this.deferred.length - 1];
      if (last && last.kind === kind) last.text += text;
      else this.deferred.push({ kind, text });
      return "";
    }
    const out = this.open?.kind === kind ? "" : this.closeOpen("completed") + this.openText(kind);
    return out + this.textDelta(text);
  }

  private openText(kind: "message" | "reasoning"): string {
    const outputIndex = this.output.length;
    if (kind === "message") {
      const id = this.ctx.newId("msg_");
      this.open = { kind: "message", id, outputIndex, text: "" };
      return this.frame("response.output_item.added", {
        output_index: outputIndex,
        item: messageItem(id, "in_progress"),
      }) + this.frame("response.content_part.added", {
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        part: outputTextPart(""),
      });
    }
    const id = this.ctx.newId("rs_");
    this.open = { kind: "reasoning", id, outputIndex, text: "" };
    return this.frame("response.output_item.added", { output_index: outputIndex, item: reasoningItem(id) }) +
      this.frame("response.reasoning_summary_part.added", {
        item_id: id,
        output_index: outputIndex,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
  }

  private textDelta(delta: string): string {
    const o = this.open;
    if (!o || o.kind === "call") return "";
    o.text += delta;
    const at = { item_id: o.id, output_index: o.outputIndex };
    return o.kind === "message"
      ? this.frame("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] })
      : this.frame("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta });
  }

  private openCall(call: Call): string {
    const id = this.ctx.newId("fc_");
    const outputIndex = this.output.length;
    this.open = { kind: "call", id, outputIndex, call };
    const item = functionCallItem(id, "in_progress", call.callId, call.name, "");
    let out = this.frame("response.output_item.added", { output_index: outputIndex, item });
    if (call.args !== "") {
      out += this.frame("response.function_call_arguments.delta", {
        item_id: id,
        output_index: outputIndex,
        delta: call.args,
      });
    }
    return out;
  }

  private callStart(index: number, callId: string, name: string): string {
    if (this.calls.has(index)) return "";
    const call: Call = { callId, name, args: this.orphanArgs.get(index) ?? "" };
    this.orphanArgs.delete(index);
    this.calls.set(index, call);
    if (this.open?.kind === "call") {
      this.deferred.push({ kind: "call", call });
      return "";
    }
    return this.closeOpen("completed") + this.openCall(call);
  }

  private callDelta(index: number, args: string): string {
    if (args === "") return "";
    const call = this.calls.get(index);
    if (!call) {
      this.orphanArgs.set(index, (this.orphanArgs.get(index) ?? "") + args);
      return "";
    }
    call.args += args;
    const o = this.open;
    if (o?.kind !== "call" || o.call !== call) return ""; // buffered until its item opens
    return this.frame("response.function_call_arguments.delta", {
      item_id: o.id,
      output_index: o.outputIndex,
      delta: args,
    });
  }

  private snapshot(o: Open, status: ItemStatus): Fields {
    if (o.kind === "message") return messageItem(o.id, status, o.text);
    if (o.kind === "reasoning") return reasoningItem(o.id, o.text);
    const args = status === "completed" ? finalArguments(o.call.args) : o.call.args;
    return functionCallItem(o.id, status, o.call.callId, o.call.name, args);
  }

  private closeOpen(status: "completed" | "incomplete"): string {
    const o = this.open;
    if (!o) return "";
    this.open = null;
    const at = { item_id: o.id, output_index: o.outputIndex };
    let out: string;
    let item: Fields;
    if (o.kind === "message") {
      out = this.frame("response.output_text.done", { ...at, content_index: 0, text: o.text, logprobs: [] }) +
        this.frame("response.content_part.done", { ...at, content_index: 0, part: outputTextPart(o.text) });
      item = messageItem(o.id, status, o.text);
    } else if (o.kind === "reasoning") {
      const part = { type: "summary_text", text: o.text };
      out = this.frame("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: o.text }) +
        this.frame("response.reasoning_summary_part.done", { ...at, summary_index: 0, part });
      item = reasoningItem(o.id, o.text);
    } else {
      const args = finalArguments(o.call.args);
      out = this.frame("response.function_call_arguments.done", { ...at, name: o.call.name, arguments: args });
      item = functionCallItem(o.id, status, o.call.callId, o.call.name, args);
    }
    this.output.push(item);
    return out + this.frame("response.output_item.done", { output_index: o.outputIndex, item });
  }

  private finish(reason: IRStopReason): string {
    const { status, incompleteReason } = statusFromStopReason(reason);
    const pending = this.deferred.splice(0);
    // Only the last item can have been cut by a token cap.
    let out = this.closeOpen(pending.length === 0 ? status : "completed");
    pending.forEach((d, k) => {
      out += d.kind === "call" ? this.openCall(d.call) : this.openText(d.kind) + this.textDelta(d.text);
      out += this.closeOpen(k === pending.length - 1 ? status : "completed");
    });
    this.ended = true;
    const now = this.ctx.now();
    return out + this.frame(`response.${status}`, {
      response: this.response(status, {
        completedAt: status === "completed" ? now : null,
        incompleteReason,
        usage: usageToWire(this.usage),
      }),
    });
  }
}

export function createStreamEncoder(ctx: EncodeContext): StreamEncoder {
  return new ResponsesStreamEncoder(ctx);
}
