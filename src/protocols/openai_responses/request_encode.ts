/** IRRequest → Responses upstream body (protocols §4.2–§4.4, pitfalls 23–25). Stateless: `store:false`. */
import type { UpstreamRequestOptions } from "../codec.ts";
import type { IRMessage, IRPart, IRRequest } from "../../ir/request.ts";
import type { JsonObject } from "../../util/json.ts";
import { toolChoiceToWire, toolsToWire } from "./tools.ts";

type Item = JsonObject;

function imageUrl(p: Extract<IRPart, { type: "image" }>): string {
  if (p.data !== undefined) return `data:${p.mediaType ?? "image/png"};base64,${p.data}`;
  if (p.url !== undefined) return p.url;
  throw new Error("openai_responses: image part without data or url");
}

function userItems(m: IRMessage): Item[] {
  const results: Item[] = [];
  const content: Item[] = [];
  for (const p of m.parts) {
    switch (p.type) {
      case "text":
        if (p.text !== "") content.push({ type: "input_text", text: p.text });
        break;
      case "image":
        content.push({ type: "input_image", image_url: imageUrl(p), detail: "auto" });
        break;
      case "tool_result":
        results.push({ type: "function_call_output", call_id: p.callId, output: p.content });
        break;
      case "file":
        throw new Error("openai_responses: file parts must be resolved before encoding");
      default:
        throw new Error(`openai_responses: ${p.type} part in a user message`);
    }
  }
  // Tool results answer the previous assistant turn, so they go first.
  return content.length > 0 ? [...results, { type: "message", role: "user", content }] : results;
}

function assistantItems(m: IRMessage): Item[] {
  const items: Item[] = [];
  let text: Item[] = [];
  const flush = () => {
    if (text.length > 0) items.push({ type: "message", role: "assistant", content: text });
    text = [];
  };
  for (const p of m.parts) {
    switch (p.type) {
      case "text":
        // Assistant history must be output_text, never input_text (protocols §6 pitfall 25).
        if (p.text !== "") text.push({ type: "output_text", text: p.text, annotations: [] });
        break;
      case "tool_call":
        flush();
        // call_id only: an invented fc_ id would be looked up as a stored item (protocols §5.4).
        items.push({ type: "function_call", call_id: p.id, name: p.name, arguments: p.arguments || "{}" });
        break;
      case "reasoning":
        // Dropped: the IR cannot tell whose signature this is; a foreign one sent as
        // encrypted_content is rejected upstream (and a bare item fails statelessly, protocols §6 pitfall 23).
        break;
      case "file":
        throw new Error("openai_responses: file parts must be resolved before encoding");
      default:
        break; // images / tool results cannot appear in assistant history
    }
  }
  flush();
  return items;
}

export function encodeRequest(req: IRRequest, opts: UpstreamRequestOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { model: opts.upstreamModel };
  const instructions = req.system.filter((s) => s !== "").join("\n\n");
  if (instructions !== "") body.instructions = instructions;
  body.input = req.messages.flatMap((m) =>
    m.role === "assistant" ? assistantItems(m) : m.role === "system" ? [developerItem(m)] : userItems(m)
  );
  if (req.tools.length > 0) body.tools = toolsToWire(req.tools);
  const choice = toolChoiceToWire(req.toolChoice);
  if (choice !== undefined) body.tool_choice = choice;
  if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  if (req.maxOutputTokens !== undefined) body.max_output_tokens = req.maxOutputTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.reasoningEffort !== undefined) {
    // summary:"auto" makes reasoning summaries stream back (protocols §5.6).
    body.reasoning = req.reasoningEffort === "none"
      ? { effort: "none" }
      : { effort: req.reasoningEffort, summary: "auto" };
  }
  if (req.user !== undefined) body.user = req.user;
  if (req.promptCacheKey !== undefined) body.prompt_cache_key = req.promptCacheKey;
  body.stream = req.stream;
  body.store = false;
  return body;
}

/** An instruction turn inside the conversation: a `developer` message at the same position (protocols §4.2). */
function developerItem(m: IRMessage): Record<string, unknown> {
  return {
    type: "message",
    role: "developer",
    content: m.parts.map((p) => (p.type === "text" ? p.text : "")).join("\n\n"),
  };
}
