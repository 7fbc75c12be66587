/**
 * Native pass-through (client and upstream both speak Responses): frames go out byte-identical
 * except `response.model` in lifecycle events, which is restored to the requested id. Each frame's
 * JSON is parsed once and also fed to a Responses stream decoder (usage tap, finish, errors).
 * Upstream failure frames are held back (push returns ""): error() renders the failure instead.
 */
import type { EncodeContext, Relay, SseFrame } from "../codec.ts";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { sseData, sseEvent } from "../sse.ts";
import { responseObject } from "./response_object.ts";
import { ResponsesStreamDecoder } from "./stream_decode.ts";
import { isObject, type JsonObject, num, str } from "../../util/json.ts";
import { parseFrameJson } from "../wire_frame.ts";

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

class ResponsesRelay implements Relay {
  private readonly decoder = new ResponsesStreamDecoder();
  private pending: IREvent[] = [];
  private lastSeq = -1;
  private terminated = false;
  /** Last full response object relayed (already carrying the client's model id). */
  private lastResponse: JsonObject | undefined;
  private readonly doneItems: unknown[] = [];

  constructor(private readonly ctx: EncodeContext) {}

  push(frame: SseFrame): string {
    if (frame.data.trim() === "[DONE]") return ""; // Responses clients expect no [DONE]
    // A frame that is not a JSON object throws, like in the decoder (../wire_frame.ts).
    const json = parseFrameJson("openai_responses", frame.data);
    let failed = false;
    for (const e of this.decoder.pushJson(json, frame.event)) {
      this.pending.push(e);
      if (e.type === "error") failed = true;
    }
    // An upstream failure (`error` / `response.failed`) is not relayed: the engine ends the stream
    // with error(), which renders the gateway's own error + response.failed continuing the numbering.
    if (failed) return "";
    const type = str(json.type) ?? frame.event;
    const seq = num(json.sequence_number);
    if (seq !== undefined) this.lastSeq = seq;
    if (type && TERMINAL.has(type)) this.terminated = true;
    if (type === "response.output_item.done" && json.item !== undefined) this.doneItems.push(json.item);

    let data = frame.data;
    const res = json.response;
    if (isObject(res)) {
      if (res.model !== undefined && res.model !== this.ctx.model) {
        res.model = this.ctx.model;
        data = JSON.stringify(json);
      }
      this.lastResponse = res;
    }
    return this.out(frame.event ?? type, data);
  }

  events(): IREvent[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** Responses streams end with their terminal event; nothing is owed when the body ends. */
  end(): string {
    return "";
  }

  error(err: ErrorObject): string {
    if (this.terminated) return "";
    this.terminated = true;
    const out = sseEvent("error", {
      type: "error",
      sequence_number: ++this.lastSeq,
      code: err.code,
      message: err.message,
      param: err.param,
      error: err,
      request_id: err.request_id,
    });
    const base = this.lastResponse ?? responseObject(this.ctx, {
      id: this.ctx.newId("resp_"),
      createdAt: this.ctx.now(),
      status: "failed",
      output: [],
      usage: null,
    });
    const response = {
      ...base,
      status: "failed",
      error: { code: err.code, message: err.message },
      output: this.doneItems,
    };
    return out +
      sseEvent("response.failed", { type: "response.failed", sequence_number: ++this.lastSeq, response });
  }

  private out(event: string | undefined, data: string): string {
    return event ? sseEvent(event, data) : sseData(data);
  }
}

export function createRelay(ctx: EncodeContext): Relay {
  return new ResponsesRelay(ctx);
}
