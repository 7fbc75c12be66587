/** Upstream Response JSON (protocols §4.5) → IRResponse, the envelope read through ./wire.ts. Lenient about extra/missing fields. */
import { UpstreamProtocolError } from "../codec.ts";
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { emptyUsage, mergeUsage } from "../../ir/usage.ts";
import { stopReasonFromStatus } from "./status.ts";
import { usageFromWire } from "./usage.ts";
import { isObject, str } from "../../util/json.ts";
import { ResponseObject } from "./wire.ts";

function texts(list: unknown, type: string): string[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((s) => isObject(s) && s.type === type && typeof s.text === "string" ? [s.text] : []);
}

/** Output items → IR blocks; `refused` tells whether a refusal part was seen. */
export function outputBlocks(output: unknown[]): { blocks: IROutputBlock[]; refused: boolean } {
  const blocks: IROutputBlock[] = [];
  let refused = false;
  for (const item of output) {
    if (!isObject(item)) continue;
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isObject(part)) continue;
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

function failureMessage(error: unknown): string {
  const err = isObject(error) ? error : {};
  const code = str(err.code);
  const message = str(err.message) ?? "upstream response failed";
  return code ? `${code}: ${message}` : message;
}

export function decodeResponse(json: unknown): IRResponse {
  const parsed = ResponseObject.safeParse(json);
  if (!parsed.success || !parsed.data.output) {
    throw new UpstreamProtocolError("openai_responses: body is not a response object");
  }
  const r = parsed.data;
  const status = r.status ?? "completed";
  if (status === "failed") throw new UpstreamProtocolError(failureMessage(r.error));
  if (status !== "completed" && status !== "incomplete") {
    throw new UpstreamProtocolError(`openai_responses: unexpected response status ${JSON.stringify(status)}`);
  }
  const { blocks, refused } = outputBlocks(r.output ?? []);
  const hasToolCalls = blocks.some((b) => b.type === "tool_call");
  const res: IRResponse = {
    id: r.id ?? "",
    model: r.model ?? "",
    content: blocks,
    stopReason: stopReasonFromStatus(status, r.incomplete_details, hasToolCalls, refused),
  };
  const usage = usageFromWire(r.usage);
  if (usage) res.usage = mergeUsage(emptyUsage(), usage);
  return res;
}
