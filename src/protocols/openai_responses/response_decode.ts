/** Upstream Response JSON (§4.5) → IRResponse. Lenient about extra/missing fields. */
import { UpstreamProtocolError } from "../codec.ts";
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { emptyUsage, mergeUsage } from "../../ir/usage.ts";
import { stopReasonFromStatus } from "./status.ts";
import { usageFromWire } from "./usage.ts";
import { isRecord, type JsonObject, str } from "./util.ts";

function texts(list: unknown, type: string): string[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((s) => isRecord(s) && s.type === type && typeof s.text === "string" ? [s.text] : []);
}

/** Output items → IR blocks; `refused` tells whether a refusal part was seen. */
export function outputBlocks(output: unknown[]): { blocks: IROutputBlock[]; refused: boolean } {
  const blocks: IROutputBlock[] = [];
  let refused = false;
  for (const item of output) {
    if (!isRecord(item)) continue;
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isRecord(part)) continue;
        if (part.type === "output_text" && typeof part.text === "string") {
          blocks.push({ type: "text", text: part.text });
        } else if (part.type === "refusal" && typeof part.refusal === "string") {
          refused = true;
          blocks.push({ type: "text", text: part.refusal });
        }
      }
    } else if (item.type === "reasoning") {
      let parts = texts(item.summary, "summary_text");
      if (parts.length === 0) parts = texts(item.content, "reasoning_text");
      if (parts.length > 0) blocks.push({ type: "reasoning", text: parts.join("\n\n") });
    } else if (item.type === "function_call") {
      const args = str(item.arguments) ?? "";
      blocks.push({
        type: "tool_call",
        id: str(item.call_id) ?? str(item.id) ?? "",
        name: str(item.name) ?? "",
        arguments: args === "" ? "{}" : args,
      });
    }
    // Unknown / hosted-tool items carry nothing the IR can express: skipped.
  }
  return { blocks, refused };
}

function failureMessage(json: JsonObject): string {
  const err = isRecord(json.error) ? json.error : {};
  const code = str(err.code);
  const message = str(err.message) ?? "upstream response failed";
  return code ? `${code}: ${message}` : message;
}

export function decodeResponse(json: unknown): IRResponse {
  if (
    !isRecord(json) || !Array.isArray(json.output) ||
    (json.object !== undefined && json.object !== "response")
  ) {
    throw new UpstreamProtocolError("openai_responses: body is not a response object");
  }
  const status = json.status ?? "completed";
  if (status === "failed") throw new UpstreamProtocolError(failureMessage(json));
  if (status !== "completed" && status !== "incomplete") {
    throw new UpstreamProtocolError(`openai_responses: unexpected response status ${JSON.stringify(status)}`);
  }
  const { blocks, refused } = outputBlocks(json.output);
  const hasToolCalls = blocks.some((b) => b.type === "tool_call");
  const res: IRResponse = {
    id: str(json.id) ?? "",
    model: str(json.model) ?? "",
    content: blocks,
    stopReason: stopReasonFromStatus(status, json.incomplete_details, hasToolCalls, refused),
  };
  const usage = usageFromWire(json.usage);
  if (usage) res.usage = mergeUsage(emptyUsage(), usage);
  return res;
}
