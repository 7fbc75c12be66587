/** Internal request → Chat Completions upstream body (protocols §5.1–§5.6). */
import type { IRMessage, IRPart, IRRequest, IRToolChoice } from "../../ir/request.ts";
import type { JsonObject } from "../../util/json.ts";
import type { UpstreamRequestOptions } from "../codec.ts";

function imageUrl(p: Extract<IRPart, { type: "image" }>): string {
  if (p.data !== undefined) return `data:${p.mediaType ?? "image/png"};base64,${p.data}`;
  if (p.url !== undefined) return p.url;
  throw new Error("openai_chat: image part without data or url");
}

function userContentPart(p: IRPart): JsonObject | undefined {
  switch (p.type) {
    case "text":
      return { type: "text", text: p.text };
    case "image":
      return { type: "image_url", image_url: { url: imageUrl(p) } };
    case "file":
      throw new Error("openai_chat: file parts must be resolved before the upstream call");
    default:
      return undefined; // tool results are emitted separately; history-only parts do not belong here
  }
}

/** Tool results first (as `tool` messages), then the rest of the turn as one user message (protocols §5.4, pitfall 30). */
function encodeUser(m: IRMessage): JsonObject[] {
  const out: JsonObject[] = [];
  const rest: JsonObject[] = [];
  for (const p of m.parts) {
    if (p.type === "tool_result") {
      out.push({ role: "tool", tool_call_id: p.callId, content: p.content });
    } else {
      const part = userContentPart(p);
      if (part) rest.push(part);
    }
  }
  if (rest.length > 0 || out.length === 0) {
    const only = rest[0];
    const content = rest.length === 1 && only?.type === "text" ? only.text : rest.length === 0 ? "" : rest;
    out.push({ role: "user", content });
  }
  return out;
}

function encodeAssistant(m: IRMessage): JsonObject {
  let text = "";
  let reasoning = "";
  const toolCalls: JsonObject[] = [];
  for (const p of m.parts) {
    if (p.type === "text") text += p.text;
    else if (p.type === "reasoning") reasoning += p.text;
    else if (p.type === "tool_call") {
      toolCalls.push({
        id: p.id,
        type: "function",
        function: { name: p.name, arguments: p.arguments === "" ? "{}" : p.arguments },
      });
    } else if (p.type === "file") {
      throw new Error("openai_chat: file parts must be resolved before the upstream call");
    }
  }
  const msg: JsonObject = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) msg.tool_calls = toolCalls;
  if (reasoning !== "") msg.reasoning_content = reasoning;
  return msg;
}

function encodeToolChoice(c: IRToolChoice): unknown {
  return c.type === "tool" ? { type: "function", function: { name: c.name } } : c.type;
}

export function encodeRequest(req: IRRequest, opts: UpstreamRequestOptions): Record<string, unknown> {
  const messages: JsonObject[] = req.system.map((s) => ({ role: "system", content: s }));
  for (const m of req.messages) {
    if (m.role === "user") messages.push(...encodeUser(m));
    else if (m.role === "system") messages.push({ role: "system", content: textOf(m) });
    else messages.push(encodeAssistant(m));
  }
  const body: JsonObject = { model: opts.upstreamModel, messages };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const fn: JsonObject = { name: t.name };
      if (t.description !== undefined) fn.description = t.description;
      fn.parameters = t.parameters ?? { type: "object", properties: {} };
      if (t.strict !== undefined) fn.strict = t.strict;
      return { type: "function", function: fn };
    });
    if (req.toolChoice) body.tool_choice = encodeToolChoice(req.toolChoice);
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  } // without tools, OpenAI rejects tool_choice and parallel_tool_calls: both are dropped
  if (req.maxOutputTokens !== undefined) body.max_completion_tokens = req.maxOutputTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop.length > 0) body.stop = req.stop;
  if (req.reasoningEffort !== undefined) body.reasoning_effort = req.reasoningEffort;
  if (req.user !== undefined) body.user = req.user;
  if (req.promptCacheKey !== undefined) body.prompt_cache_key = req.promptCacheKey;
  if (req.hostedWebSearch) {
    // protocols: Responses' hosted web_search ≈ Chat web_search_options (spec §4.2 forwards it for alpha).
    const options: JsonObject = {};
    if (req.hostedWebSearch.searchContextSize) {
      options.search_context_size = req.hostedWebSearch.searchContextSize;
    }
    if (req.hostedWebSearch.userLocation) options.user_location = req.hostedWebSearch.userLocation;
    body.web_search_options = options;
  }
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** The text of an instruction turn (its parts are text only). */
function textOf(m: IRMessage): string {
  return m.parts.map((p) => (p.type === "text" ? p.text : "")).join("\n\n");
}
