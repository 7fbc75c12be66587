/** OpenAI Responses SSE lifecycle (§4.7): `event:` lines, sequence_number from 0, terminal event. */

import { pieces, type Plan } from "./answer.ts";
import type { Frames } from "./pipeline.ts";
import { baseResponse, callItem, finish, messageItem, planItems, reasoningItem } from "./responses_items.ts";
import { CHECKPOINT, FINAL, type Frame, type SimState } from "./stream.ts";

type Obj = Record<string, any>;

const ERROR_MESSAGE = "The server had an error while processing your request. (simulated)";

export function responseFrames(plan: Plan, body: Obj, state: SimState): Frames {
  let seq = 0;
  const base = baseResponse(plan, body, state);
  const items = planItems(plan, body, state);
  /** Frame whose JSON starts with type and sequence_number; `rest` is the remaining members. */
  const ev = (type: string, rest: string) =>
    `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq++},${rest}}\n\n`;
  const evObj = (type: string, rest: Obj) => ev(type, JSON.stringify(rest).slice(1, -1));

  function* gen(): Generator<Frame> {
    yield evObj("response.created", { response: base });
    yield evObj("response.in_progress", { response: base });
    let oi = 0;
    if (items.reasoning) {
      const r = items.reasoning;
      const at = `"item_id":"${r.id}","output_index":${oi},"summary_index":0`;
      yield evObj("response.output_item.added", { output_index: oi, item: reasoningItem(r, false) });
      yield ev("response.reasoning_summary_part.added", `${at},"part":{"type":"summary_text","text":""}`);
      for (const p of pieces(plan.reasoning, plan.reasoningTokens)) {
        yield ev("response.reasoning_summary_text.delta", `${at},"delta":${JSON.stringify(p)}`);
        yield CHECKPOINT;
      }
      const text = JSON.stringify(r.text);
      yield ev("response.reasoning_summary_text.done", `${at},"text":${text}`);
      yield ev("response.reasoning_summary_part.done", `${at},"part":{"type":"summary_text","text":${text}}`);
      yield evObj("response.output_item.done", { output_index: oi++, item: reasoningItem(r, true) });
    }
    if (items.message) {
      const m = items.message;
      const at = `"item_id":"${m.id}","output_index":${oi},"content_index":0`;
      yield evObj("response.output_item.added", { output_index: oi, item: messageItem(m, "in_progress") });
      yield ev(
        "response.content_part.added",
        `${at},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`,
      );
      for (const p of pieces(plan.text, plan.textTokens)) {
        yield ev("response.output_text.delta", `${at},"delta":${JSON.stringify(p)},"logprobs":[]`);
        yield CHECKPOINT;
      }
      const text = JSON.stringify(m.text);
      yield ev("response.output_text.done", `${at},"text":${text},"logprobs":[]`);
      yield ev(
        "response.content_part.done",
        `${at},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":${text}}`,
      );
      yield evObj("response.output_item.done", {
        output_index: oi++,
        item: messageItem(m, items.status, m.text),
      });
    }
    if (items.call) {
      const c = items.call;
      const at = `"item_id":"${c.id}","output_index":${oi}`;
      yield evObj("response.output_item.added", { output_index: oi, item: callItem(c, "in_progress", "") });
      for (const f of plan.tool!.fragments) {
        yield ev("response.function_call_arguments.delta", `${at},"delta":${JSON.stringify(f)}`);
        yield CHECKPOINT;
      }
      yield ev(
        "response.function_call_arguments.done",
        `${at},"arguments":${JSON.stringify(c.args)},"name":${JSON.stringify(c.name)}`,
      );
      yield evObj("response.output_item.done", {
        output_index: oi++,
        item: callItem(c, "completed", c.args),
      });
    }
    yield FINAL;
    const type = items.status === "incomplete" ? "response.incomplete" : "response.completed";
    yield evObj(type, { response: finish(base, plan, items) });
  }

  const errorFrames = (): string => {
    const error = { type: "server_error", code: "server_error", message: ERROR_MESSAGE, param: null };
    const failed = {
      ...base,
      status: "failed",
      error: { code: "server_error", message: ERROR_MESSAGE },
      output: [],
      usage: null,
    };
    return ev(
      "error",
      `"code":"server_error","message":${JSON.stringify(ERROR_MESSAGE)},"param":null,"error":${
        JSON.stringify(error)
      }`,
    ) + evObj("response.failed", { response: failed });
  };

  return { frames: gen(), errorFrames };
}
