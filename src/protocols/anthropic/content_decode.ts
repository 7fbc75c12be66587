/** Client `messages` (and `system`) → internal messages, strictly validated (protocols §2.3). */
import type { IRMessage, IRPart, IRRole } from "../../ir/request.ts";
import { isValidToolId } from "./tool_id.ts";
import type { JsonObject } from "../../util/json.ts";
import { array, bad, nonEmptyString, object, optBoolean, string } from "./validate.ts";

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** Server-tool history blocks: echoes of provider-run tools, with no internal representation (dropped). */
const SERVER_TOOL_BLOCKS = new Set([
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
]);

function text(block: JsonObject, p: string): IRPart {
  return { type: "text", text: nonEmptyString(block.text, `${p}.text`) };
}

function image(block: JsonObject, p: string): IRPart {
  const source = object(block.source, `${p}.source`);
  if (source.type === "base64") {
    const mediaType = string(source.media_type, `${p}.source.media_type`);
    if (!IMAGE_TYPES.has(mediaType)) bad(`${p}.source.media_type`);
    return { type: "image", mediaType, data: nonEmptyString(source.data, `${p}.source.data`) };
  }
  if (source.type === "url") return { type: "image", url: nonEmptyString(source.url, `${p}.source.url`) };
  return bad(`${p}.source.type`);
}

/** Only plain-text documents translate (into a text part, titled when a title is given). */
function document(block: JsonObject, p: string): IRPart {
  const source = object(block.source, `${p}.source`);
  if (source.type !== "text") bad(`${p}.source.type`);
  const data = nonEmptyString(source.data, `${p}.source.data`);
  const title = block.title === undefined || block.title === null ? "" : string(block.title, `${p}.title`);
  return { type: "text", text: title ? `${title}\n\n${data}` : data };
}

/** A tool result: text joins into the result string; images follow it as separate image parts. */
function toolResult(block: JsonObject, p: string): IRPart[] {
  const callId = nonEmptyString(block.tool_use_id, `${p}.tool_use_id`);
  const isError = optBoolean(block.is_error, `${p}.is_error`);
  const texts: string[] = [];
  const extra: IRPart[] = [];
  const content = block.content;
  if (typeof content === "string") texts.push(content);
  else if (content !== undefined) {
    array(content, `${p}.content`).forEach((raw, k) => {
      const q = `${p}.content.${k}`;
      const inner = object(raw, q);
      if (inner.type === "text") texts.push(nonEmptyString(inner.text, `${q}.text`));
      else if (inner.type === "image") extra.push(image(inner, q));
      else if (inner.type === "document") texts.push((document(inner, q) as { text: string }).text);
      else bad(`${q}.type`);
    });
  }
  const part: IRPart = { type: "tool_result", callId, content: texts.join("\n") };
  if (isError !== undefined) part.isError = isError;
  return [part, ...extra];
}

function toolUse(block: JsonObject, p: string): IRPart {
  const id = nonEmptyString(block.id, `${p}.id`);
  if (!isValidToolId(id)) bad(`${p}.id`);
  const name = nonEmptyString(block.name, `${p}.name`);
  const input = object(block.input, `${p}.input`);
  return { type: "tool_call", id, name, arguments: JSON.stringify(input) };
}

function thinking(block: JsonObject, p: string): IRPart {
  const textValue = string(block.thinking, `${p}.thinking`);
  const signature = string(block.signature, `${p}.signature`);
  return signature
    ? { type: "reasoning", text: textValue, signature }
    : { type: "reasoning", text: textValue };
}

/** One content block → zero or more internal parts. Blocks valid only in one role are checked here. */
function block(raw: unknown, role: IRRole, p: string): IRPart[] {
  const b = object(raw, p);
  if (role === "system") return b.type === "text" ? [text(b, p)] : bad(`${p}.type`); // instructions are text
  const user = role === "user";
  switch (b.type) {
    case "text":
      return [text(b, p)];
    case "image":
      return user ? [image(b, p)] : bad(`${p}.type`);
    case "document":
      return user ? [document(b, p)] : bad(`${p}.type`);
    case "input_file":
      return user ? [{ type: "file", fileId: nonEmptyString(b.file_id, `${p}.file_id`) }] : bad(`${p}.type`);
    case "tool_result":
      return user ? toolResult(b, p) : bad(`${p}.type`);
    case "tool_use":
      return user ? bad(`${p}.type`) : [toolUse(b, p)];
    case "thinking":
      return user ? bad(`${p}.type`) : [thinking(b, p)];
    case "redacted_thinking":
      return user ? bad(`${p}.type`) : [];
    default:
      if (!user && typeof b.type === "string" && SERVER_TOOL_BLOCKS.has(b.type)) return [];
      return bad(`${p}.type`);
  }
}

/**
 * Content may be empty only in a final assistant message (a prefill with nothing to continue);
 * such a message is dropped.
 */
export function decodeMessages(value: unknown): IRMessage[] {
  const list = array(value, "messages");
  if (list.length === 0) bad("messages"); // the real API refuses an empty conversation too
  const out: IRMessage[] = [];
  list.forEach((raw, i) => {
    const p = `messages.${i}`;
    const msg = object(raw, p);
    if (msg.role !== "user" && msg.role !== "assistant" && msg.role !== "system") bad(`${p}.role`);
    const role: IRRole = msg.role;
    const emptyAllowed = role === "assistant" && i === list.length - 1;
    let parts: IRPart[];
    if (typeof msg.content === "string") {
      if (msg.content === "" && !emptyAllowed) bad(`${p}.content`);
      parts = msg.content === "" ? [] : [{ type: "text", text: msg.content }];
    } else {
      const blocks = array(msg.content, `${p}.content`);
      if (blocks.length === 0 && !emptyAllowed) bad(`${p}.content`);
      parts = [];
      for (let j = 0; j < blocks.length; j++) parts.push(...block(blocks[j], role, `${p}.content.${j}`));
    }
    if (parts.length > 0 || !emptyAllowed) out.push({ role, parts });
  });
  return out;
}

/** `system`: a string or an array of text blocks → texts in order (empty string → none). */
export function decodeSystem(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value === "string") return value ? [value] : [];
  return array(value, "system").map((raw, i) => {
    const b = object(raw, `system.${i}`);
    if (b.type !== "text") bad(`system.${i}.type`);
    return nonEmptyString(b.text, `system.${i}.text`);
  });
}
