/** OpenAI Responses output items, usage and the response object (§4.5–4.6). */

import type { Plan } from "./answer.ts";
import { newId, type SimState } from "./stream.ts";

type Obj = Record<string, any>;

export function responsesUsage(plan: Plan): Obj | null {
  if (plan.usage === "none") return null;
  const z = plan.usage === "zero";
  const input = z ? 0 : plan.promptTokens;
  const output = z ? 0 : plan.outputTokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: z ? 0 : plan.cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: z ? 0 : plan.reasoningTokens },
    total_tokens: input + output,
  };
}

/** Ids and texts of the output items, shared by the JSON body and the stream. */
export interface OutputItems {
  reasoning?: { id: string; text: string; encrypted?: string };
  message?: { id: string; text: string };
  call?: { id: string; callId: string; name: string; args: string };
  status: "completed" | "incomplete";
}

export function planItems(plan: Plan, body: Obj, state: SimState): OutputItems {
  const items: OutputItems = { status: plan.truncated ? "incomplete" : "completed" };
  if (plan.reasoningTokens > 0) {
    const include = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
    items.reasoning = {
      id: newId(state, "rs_"),
      text: plan.reasoning.slice(0, plan.reasoningTokens),
      encrypted: include ? "sim_encrypted_reasoning" : undefined,
    };
  }
  if (plan.tool) {
    items.call = {
      id: newId(state, "fc_"),
      callId: newId(state, "call_"),
      name: plan.tool.name,
      args: plan.tool.args,
    };
  } else if (plan.textTokens > 0) {
    items.message = { id: newId(state, "msg_"), text: plan.text.slice(0, plan.textTokens) };
  }
  return items;
}

export function reasoningItem(r: NonNullable<OutputItems["reasoning"]>, done: boolean): Obj {
  const item: Obj = {
    id: r.id,
    type: "reasoning",
    summary: done ? [{ type: "summary_text", text: r.text }] : [],
  };
  if (r.encrypted) item.encrypted_content = r.encrypted;
  return item;
}

export function messageItem(m: NonNullable<OutputItems["message"]>, status: string, text?: string): Obj {
  return {
    id: m.id,
    type: "message",
    status,
    content: text === undefined ? [] : [{ type: "output_text", annotations: [], logprobs: [], text }],
    role: "assistant",
  };
}

export function callItem(c: NonNullable<OutputItems["call"]>, status: string, args: string): Obj {
  return { id: c.id, type: "function_call", status, arguments: args, call_id: c.callId, name: c.name };
}

export function finalOutput(items: OutputItems): Obj[] {
  const out: Obj[] = [];
  if (items.reasoning) out.push(reasoningItem(items.reasoning, true));
  if (items.message) out.push(messageItem(items.message, items.status, items.message.text));
  if (items.call) out.push(callItem(items.call, "completed", items.call.args));
  return out;
}

/** The response object with status in_progress; callers override the final fields. */
export function baseResponse(plan: Plan, body: Obj, state: SimState): Obj {
  return {
    id: newId(state, "resp_"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "in_progress",
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: plan.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: "default",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** Fill in the terminal fields of `base`. */
export function finish(base: Obj, plan: Plan, items: OutputItems): Obj {
  const incomplete = items.status === "incomplete";
  return {
    ...base,
    status: items.status,
    completed_at: incomplete ? null : Math.floor(Date.now() / 1000),
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output: finalOutput(items),
    usage: responsesUsage(plan),
  };
}
