/** Client Messages body → internal request. Strict: any bad known field is invalid_request with its param. */
import type { IRRequest } from "../../ir/request.ts";
import { decodeMessages, decodeSystem } from "./content_decode.ts";
import { decodeThinking, decodeToolChoice, decodeTools } from "./tools_decode.ts";
import { array, bad, object, optBoolean, optInteger, optNumber, string } from "./validate.ts";

function stopSequences(value: unknown): string[] {
  if (value === undefined) return [];
  return array(value, "stop_sequences").map((s, i) => string(s, `stop_sequences.${i}`));
}

function user(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const id = object(value, "metadata").user_id;
  if (id === undefined || id === null) return undefined;
  return string(id, "metadata.user_id");
}

/** Unknown top-level fields are tolerated (ignored here; the native relay still forwards them). */
export function decodeRequest(body: Record<string, unknown>): IRRequest {
  const model = string(body.model, "model");
  const maxTokens = optInteger(body.max_tokens, "max_tokens", 1);
  if (maxTokens === undefined) bad("max_tokens");
  const req: IRRequest = {
    model,
    system: decodeSystem(body.system),
    messages: decodeMessages(body.messages),
    stream: optBoolean(body.stream, "stream") ?? false,
    includeUsage: false,
    maxOutputTokens: maxTokens,
    tools: decodeTools(body.tools),
    stop: stopSequences(body.stop_sequences),
    ...decodeToolChoice(body.tool_choice),
    ...decodeThinking(body.thinking, body.output_config),
  };
  const temperature = optNumber(body.temperature, "temperature", 0, 1);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body.top_p, "top_p", 0, 1);
  if (topP !== undefined) req.topP = topP;
  const topK = optInteger(body.top_k, "top_k", 0);
  if (topK !== undefined) req.topK = topK;
  const userId = user(body.metadata);
  if (userId !== undefined) req.user = userId;
  return req;
}
