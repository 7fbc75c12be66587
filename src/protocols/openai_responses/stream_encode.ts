/**
 * IR events → Responses SSE for a client (protocols §4.7, §5.10 "X upstream → R client", pitfall 26).
 *
 * One output item is open at a time. Once a function_call item is open it stays open until
 * `finish`, because Chat upstreams may interleave argument fragments of several calls: later calls'
 * arguments and any content that follows are buffered and flushed in order at `finish`, each as a
 * complete item. So every call ends with its full arguments, whatever the interleaving.
 *
 * A provider-run web search or fetch (`server_tool`, beta) closes the open message and goes out at once as one
 * complete `web_search_call` item (stream_items.ts); text after it opens a new message item. A `citations`
 * event adds `url_citation` annotations over the cited block's span of the open message's text.
 */
import type { EncodeContext, StreamEncoder } from "../codec.ts";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IRCitation, IREvent, IRServerTool, IRStopReason } from "../../ir/events.ts";
import { emptyUsage, mergeUsage } from "../../ir/usage.ts";
import { sseEvent } from "../sse.ts";
import { type ResponseFields, responseObject, type ResponseStatus } from "./response_object.ts";
import { clientCallName } from "./namespace.ts";
import { statusFromStopReason } from "./status.ts";
import { isShownServerTool } from "./items.ts";
import {
  annotationFrames,
  argumentsDelta,
  type Call,
  closeFrames,
  type Emit,
  type Fields,
  openFrames,
  type OpenItem,
  serverToolFrames,
  snapshot,
  textDelta,
} from "./stream_items.ts";
import { usageToWire } from "./usage.ts";

type Deferred =
  | { kind: "call"; call: Call }
  | { kind: "server"; tool: IRServerTool }
  /** `cited`: the cited spans of a deferred message's text, announced once its text is out. */
  | { kind: "message" | "reasoning"; text: string; cited?: CitedSpan[] };

interface CitedSpan {
  start: number;
  end: number;
  citations: IRCitation[];
}

class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private started = false;
  private ended = false;
  private id = "";
  private createdAt = 0;
  private readonly output: Fields[] = [];
  private open: OpenItem | null = null;
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
      case "server_tool":
        return isShownServerTool(ev) ? this.begin() + this.serverTool(ev) : "";
      case "citations":
        return this.citations(ev.textLength, ev.citations);
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
    if (this.open) output.push(snapshot(this.open, "incomplete"));
    return this.emit("error", {
      code: err.code,
      message: err.message,
      param: err.param,
      error: err,
      request_id: err.request_id,
    }) + this.emit("response.failed", {
      response: this.response("failed", {
        output,
        error: { code: err.code, message: err.message },
        usage: this.sawUsage ? usageToWire(this.usage) : null,
      }),
    });
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
    return this.emit("response.created", { response: this.response("in_progress") }) +
      this.emit("response.in_progress", { response: this.response("in_progress") });
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

  private serverTool(tool: IRServerTool): string {
    if (this.open?.kind === "call") {
      this.deferred.push({ kind: "server", tool });
      return "";
    }
    const out = this.closeOpen("completed");
    const { text, item } = serverToolFrames(this.emit, this.ctx.newId("ws_"), this.output.length, tool);
    this.output.push(item);
    return out + text;
  }

  private citations(textLength: number, citations: IRCitation[]): string {
    if (citations.length === 0) return "";
    const span = (text: string): CitedSpan => ({
      start: Math.max(0, text.length - textLength),
      end: text.length,
      citations,
    });
    if (this.open?.kind === "call") {
      const last = this.deferred[this.deferred.length - 1];
      if (last?.kind === "message") (last.cited ??= []).push(span(last.text));
      return "";
    }
    if (this.open?.kind !== "message") return "";
    const s = span(this.open.text);
    return annotationFrames(this.emit, this.open, s.start, s.end, s.citations);
  }

  private readonly emit: Emit = (type, fields) =>
    sseEvent(type, { type, sequence_number: this.seq++, ...fields });

  private openText(kind: "message" | "reasoning"): string {
    const id = this.ctx.newId(kind === "message" ? "msg_" : "rs_");
    const o: OpenItem = kind === "message"
      ? { kind, id, outputIndex: this.output.length, text: "", annotations: [] }
      : { kind, id, outputIndex: this.output.length, text: "" };
    this.open = o;
    return openFrames(this.emit, o);
  }

  private textDelta(delta: string): string {
    return this.open ? textDelta(this.emit, this.open, delta) : "";
  }

  private openCall(call: Call): string {
    const o: OpenItem = { kind: "call", id: this.ctx.newId("fc_"), outputIndex: this.output.length, call };
    this.open = o;
    return openFrames(this.emit, o);
  }

  private callStart(index: number, callId: string, name: string): string {
    if (this.calls.has(index)) return "";
    const call: Call = {
      callId,
      ...clientCallName(this.ctx.request.tools, name),
      args: this.orphanArgs.get(index) ?? "",
    };
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
    return argumentsDelta(this.emit, o, args);
  }

  private closeOpen(status: "completed" | "incomplete"): string {
    const o = this.open;
    if (!o) return "";
    this.open = null;
    const { text, item } = closeFrames(this.emit, o, status);
    this.output.push(item);
    return text;
  }

  private finish(reason: IRStopReason): string {
    const { status, incompleteReason } = statusFromStopReason(reason);
    const pending = this.deferred.splice(0);
    // Only the last item can have been cut by a token cap.
    let out = this.closeOpen(pending.length === 0 ? status : "completed");
    pending.forEach((d, k) => {
      if (d.kind === "server") {
        out += this.serverTool(d.tool);
        return;
      }
      if (d.kind === "call") out += this.openCall(d.call);
      else {
        out += this.openText(d.kind) + this.textDelta(d.text);
        for (const c of d.cited ?? []) {
          if (this.open) out += annotationFrames(this.emit, this.open, c.start, c.end, c.citations);
        }
      }
      out += this.closeOpen(k === pending.length - 1 ? status : "completed");
    });
    this.ended = true;
    const now = this.ctx.now();
    return out + this.emit(`response.${status}`, {
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
