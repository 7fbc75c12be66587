/** OpenAI Responses upstream: request inspection (§4.2–4.4); bodies in responses_items / responses_stream. */

import { type Inspect, promptTokensOf, type ToolOffer } from "./answer.ts";
import type { Protocol } from "./pipeline.ts";
import { baseResponse, finish, planItems } from "./responses_items.ts";
import { responseFrames } from "./responses_stream.ts";
import { contentText, lastTurn, numberOr } from "./turn.ts";

type Obj = Record<string, any>;

function tools(body: Obj): ToolOffer {
  const names: string[] = [];
  if (Array.isArray(body.tools)) {
    for (const t of body.tools) if (t?.type === "function" && typeof t.name === "string") names.push(t.name);
  }
  const tc = body.tool_choice;
  if (tc === "none") return { names, choice: "none", webSearch: false };
  if (tc === "required") return { names, choice: "any", webSearch: false };
  if (tc?.type === "function" && typeof tc.name === "string") {
    return { names, choice: "named", name: tc.name, webSearch: false };
  }
  if (tc?.type === "allowed_tools" && tc.mode === "required") {
    return { names, choice: "any", webSearch: false };
  }
  return { names, choice: "auto", webSearch: false };
}

function side(item: Obj): "user" | "tool" | undefined {
  if (item?.type === "function_call_output") return "tool";
  if ((item?.type === undefined || item.type === "message") && item?.role === "user") return "user";
  return undefined;
}

function itemText(item: Obj): string {
  if (item.type === "function_call_output") {
    return typeof item.output === "string" ? item.output : contentText(item.output);
  }
  return contentText(item.content);
}

export const responses: Protocol = {
  flavor: "openai",
  validate(body) {
    if (typeof body.model !== "string" || !body.model) return "Missing required parameter: 'model'.";
    if (typeof body.input !== "string" && !Array.isArray(body.input)) {
      return "Missing required parameter: 'input'.";
    }
    return null;
  },
  inspect(body: Obj): Inspect {
    const input = body.input;
    return {
      model: body.model,
      stream: body.stream === true,
      budget: numberOr(body.max_output_tokens),
      promptTokens: promptTokensOf(body.instructions, input, body.tools),
      turn: typeof input === "string" ? { text: input, toolResult: false } : lastTurn(input, side, itemText),
      tools: tools(body),
    };
  },
  json(plan, body, state) {
    return finish(baseResponse(plan, body, state), plan, planItems(plan, body, state));
  },
  stream(plan, body, state) {
    return responseFrames(plan, body, state);
  },
};
