/**
 * Internal messages → Anthropic upstream `messages` (protocols §5.1, §5.4): tool results grouped into one user
 * message ahead of its other blocks, consecutive same-role turns merged, empty blocks and unsigned
 * reasoning dropped, foreign tool ids rewritten deterministically.
 */
import type { IRMessage, IRPart, IRRole } from "../../ir/request.ts";
import { isObject, type JsonObject } from "../../util/json.ts";
import { sanitizeToolId } from "./tool_id.ts";

type Block = JsonObject;

interface Turn {
  role: IRRole;
  blocks: Block[];
}

/** Tool-call `arguments` → an `input` object; unparsable or non-object JSON becomes `{}`. */
export function parseToolInput(args: string): JsonObject {
  try {
    const v: unknown = JSON.parse(args || "{}");
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

function toBlock(part: IRPart): Block | undefined {
  switch (part.type) {
    case "text":
      return part.text ? { type: "text", text: part.text } : undefined;
    case "image":
      if (part.data) {
        return {
          type: "image",
          source: { type: "base64", media_type: part.mediaType ?? "image/png", data: part.data },
        };
      }
      return part.url ? { type: "image", source: { type: "url", url: part.url } } : undefined;
    case "file":
      throw new Error("file parts must be resolved before encoding an Anthropic request");
    case "tool_call":
      return {
        type: "tool_use",
        id: sanitizeToolId(part.id),
        name: part.name,
        input: parseToolInput(part.arguments),
      };
    case "tool_result": {
      const block: Block = { type: "tool_result", tool_use_id: sanitizeToolId(part.callId) };
      if (part.content) block.content = part.content;
      if (part.isError) block.is_error = true;
      return block;
    }
    case "reasoning":
      return part.signature
        ? { type: "thinking", thinking: part.text, signature: part.signature }
        : undefined;
  }
}

/** Tool results first (in their order), then everything else (in its order). */
function resultsFirst(blocks: Block[]): Block[] {
  const results = blocks.filter((b) => b.type === "tool_result");
  return results.length === 0 ? blocks : [...results, ...blocks.filter((b) => b.type !== "tool_result")];
}

export function encodeMessages(messages: IRMessage[]): Record<string, unknown>[] {
  const turns: Turn[] = [];
  for (const msg of messages) {
    for (const part of msg.parts) {
      const block = toBlock(part);
      if (!block) continue;
      const role: IRRole = part.type === "tool_result" ? "user" : msg.role;
      const last = turns[turns.length - 1];
      if (last && last.role === role) last.blocks.push(block);
      else turns.push({ role, blocks: [block] });
    }
  }
  return turns.map((t) => ({ role: t.role, content: t.role === "user" ? resultsFirst(t.blocks) : t.blocks }));
}
