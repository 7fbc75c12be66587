/**
 * Native pass-through (Anthropic client → Anthropic upstream): the body and the frames go through as
 * the upstream sent them; only the model name is swapped. The frames also feed a stream decoder so the
 * engine can tap usage, the finish and in-band errors.
 */
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import type { EncodeContext, Relay, SseFrame } from "../codec.ts";
import { isObject } from "../../util/json.ts";
import { parseFrameJson } from "../wire_frame.ts";
import { errorFrame } from "./error.ts";
import { AnthropicStreamDecoder } from "./stream_decode.ts";

/** `event:` + `data:` lines; multi-line data keeps one `data:` line per line. */
function serialise(event: string | undefined, data: string): string {
  const head = event ? `event: ${event}\n` : "";
  return head + data.split("\n").map((line) => `data: ${line}\n`).join("") + "\n";
}

export class AnthropicRelay implements Relay {
  readonly #ctx: EncodeContext;
  readonly #decoder = new AnthropicStreamDecoder();
  #events: IREvent[] = [];

  constructor(ctx: EncodeContext) {
    this.#ctx = ctx;
  }

  push(frame: SseFrame): string {
    // A frame that is not a JSON object throws here, like in the decoder (../wire_frame.ts).
    const json = parseFrameJson("anthropic", frame.data);
    for (const e of this.#decoder.pushJson(json, frame.event)) this.#events.push(e);
    let event = frame.event;
    let data = frame.data;
    if (event === undefined && typeof json.type === "string") event = json.type;
    if (event === "message_start" && isObject(json.message) && json.message.model !== this.#ctx.model) {
      data = JSON.stringify({ ...json, message: { ...json.message, model: this.#ctx.model } });
    }
    return serialise(event, data);
  }

  events(): IREvent[] {
    const out = this.#events;
    this.#events = [];
    return out;
  }

  error(err: ErrorObject): string {
    return errorFrame(err);
  }

  /** Anthropic streams end with message_stop; nothing is owed when the body ends. */
  end(): string {
    return "";
  }
}

export function createRelay(ctx: EncodeContext): Relay {
  return new AnthropicRelay(ctx);
}
