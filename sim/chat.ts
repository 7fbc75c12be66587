/** OpenAI Chat Completions upstream (§3.5–3.8). */

import { type Inspect, pieces, type Plan, promptTokensOf, type ToolOffer } from "./answer.ts";
import type { Frames, Protocol } from "./pipeline.ts";
import { CHECKPOINT, FINAL, type Frame, newId, type SimState } from "./stream.ts";
import { contentText, lastTurn, numberOr } from "./turn.ts";

type Obj = Record<string, any>;

function tools(body: Obj): ToolOffer {
  const names: string[] = [];
  if (Array.isArray(body.tools)) {
    for (const t of body.tools) {
      const name = t?.function?.name;
      if ((t?.type === "function" || t?.type === undefined) && typeof name === "string") names.push(name);
    }
  }
  const tc = body.tool_choice;
  if (tc === "none") return { names, choice: "none", webSearch: false };
  if (tc === "required") return { names, choice: "any", webSearch: false };
  if (tc?.type === "function" && typeof tc.function?.name === "string") {
    return { names, choice: "named", name: tc.function.name, webSearch: false };
  }
  if (tc?.type === "allowed_tools" && tc.allowed_tools?.mode === "required") {
    return { names, choice: "any", webSearch: false };
  }
  return { names, choice: "auto", webSearch: false };
}

function finishReason(plan: Plan): string {
  return plan.tool ? "tool_calls" : plan.truncated ? "length" : "stop";
}

export function chatUsage(plan: Plan): Obj {
  const z = plan.usage === "zero";
  const prompt = z ? 0 : plan.promptTokens;
  const completion = z ? 0 : plan.outputTokens;
  const u: Obj = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: z ? 0 : plan.cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: z ? 0 : plan.reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
  if (plan.searches > 0) u.server_tool_use = { web_search_requests: z ? 0 : plan.searches };
  return u;
}

/** The page a `url_citation` cites: the whole answer text (the annotation's span, UTF-16 indexes). */
function citations(plan: Plan, text: string): Obj[] {
  if (!plan.urlCitation) return [];
  return [{
    type: "url_citation",
    url_citation: { start_index: 0, end_index: text.length, url: CITED_URL, title: "Страница симулятора" },
  }];
}

export const CITED_URL = "https://example.com/sim/cited";

function json(plan: Plan, _body: Obj, state: SimState): unknown {
  const content = plan.tool ? null : plan.text.slice(0, plan.textTokens);
  const message: Obj = {
    role: "assistant",
    content,
    refusal: null,
    annotations: citations(plan, content ?? ""),
  };
  if (plan.reasoningTokens > 0) message.reasoning_content = plan.reasoning.slice(0, plan.reasoningTokens);
  if (plan.tool) {
    message.tool_calls = [{
      id: newId(state, "call_"),
      type: "function",
      function: { name: plan.tool.name, arguments: plan.tool.args },
    }];
  }
  const out: Obj = {
    id: newId(state, "chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: plan.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(plan) }],
  };
  if (plan.usage !== "none") out.usage = chatUsage(plan);
  out.service_tier = "default";
  out.system_fingerprint = "fp_sim";
  return out;
}

function* frames(plan: Plan, body: Obj, state: SimState): Generator<Frame> {
  const includeUsage = body.stream_options?.include_usage === true && plan.usage !== "none";
  const head = `{"id":"${newId(state, "chatcmpl-")}","object":"chat.completion.chunk","created":${
    Math.floor(Date.now() / 1000)
  },"model":${JSON.stringify(plan.model)},"system_fingerprint":"fp_sim",`;
  const tail = includeUsage ? `,"usage":null}\n\n` : `}\n\n`;
  const chunk = (delta: string, finish = "null") =>
    `data: ${head}"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]${tail}`;

  yield chunk(`{"role":"assistant","content":${plan.tool ? "null" : '""'},"refusal":null}`);
  for (const p of pieces(plan.reasoning, plan.reasoningTokens)) {
    yield chunk(`{"reasoning_content":${JSON.stringify(p)}}`);
    yield CHECKPOINT;
  }
  if (plan.tool) {
    const t = plan.tool;
    yield chunk(
      `{"tool_calls":[{"index":0,"id":"${newId(state, "call_")}","type":"function","function":{"name":${
        JSON.stringify(t.name)
      },"arguments":""}}]}`,
    );
    for (const f of t.fragments) {
      yield chunk(`{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(f)}}}]}`);
      yield CHECKPOINT;
    }
  }
  let text = "";
  for (const p of pieces(plan.text, plan.textTokens)) {
    text += p;
    yield chunk(`{"content":${JSON.stringify(p)}}`);
    yield CHECKPOINT;
  }
  if (plan.urlCitation) yield chunk(`{"annotations":${JSON.stringify(citations(plan, text))}}`);
  yield FINAL;
  yield chunk("{}", `"${finishReason(plan)}"`);
  if (includeUsage) yield `data: ${head}"choices":[],"usage":${JSON.stringify(chatUsage(plan))}}\n\n`;
  yield "data: [DONE]\n\n";
}

const ERROR_FRAME = `data: ${
  JSON.stringify({
    error: {
      message: "The server had an error while processing your request. (simulated)",
      type: "server_error",
      param: null,
      code: null,
    },
  })
}\n\n`;

export const chat: Protocol = {
  flavor: "openai",
  validate(body) {
    if (typeof body.model !== "string" || !body.model) return "you must provide a model parameter";
    if (!Array.isArray(body.messages)) return "'messages' is a required property";
    return null;
  },
  inspect(body: Obj): Inspect {
    const messages = body.messages as Obj[];
    return {
      model: body.model,
      stream: body.stream === true,
      budget: numberOr(body.max_completion_tokens) ?? numberOr(body.max_tokens),
      promptTokens: promptTokensOf(messages, body.tools),
      turn: lastTurn(
        messages,
        (m) => m?.role === "user" ? "user" : m?.role === "tool" ? "tool" : undefined,
        (m) => contentText(m.content),
      ),
      tools: tools(body),
    };
  },
  json,
  stream(plan, body, state): Frames {
    return { frames: frames(plan, body, state), errorFrames: () => ERROR_FRAME };
  },
};
