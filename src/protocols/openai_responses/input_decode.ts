/** Client `input` (string or item list, protocols §4.3) → IR system texts and messages. */
import { fieldError } from "../../errors/gateway_error.ts";
import type { IRMessage, IRPart } from "../../ir/request.ts";
import { isObject, type JsonObject, str } from "../../util/json.ts";
import { flatToolName } from "./namespace.ts";
import { absent } from "./util.ts";

export interface DecodedInput {
  system: string[];
  messages: IRMessage[];
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

type Role = "user" | "assistant" | "system" | "developer";
const ROLES: readonly string[] = ["user", "assistant", "system", "developer"];

/** Collects messages, merging what belongs to one turn (assistant items; tool results + following user text). */
class Conversation {
  readonly system: string[] = [];
  readonly messages: IRMessage[] = [];

  private last(): IRMessage | undefined {
    return this.messages[this.messages.length - 1];
  }

  private onlyToolResults(m: IRMessage): boolean {
    return m.role === "user" && m.parts.length > 0 && m.parts.every((p) => p.type === "tool_result");
  }

  assistant(parts: IRPart[]): void {
    const last = this.last();
    if (last?.role === "assistant") last.parts.push(...parts);
    else this.messages.push({ role: "assistant", parts });
  }

  toolResult(part: IRPart): void {
    const last = this.last();
    if (last && this.onlyToolResults(last)) last.parts.push(part);
    else this.messages.push({ role: "user", parts: [part] });
  }

  user(parts: IRPart[]): void {
    const last = this.last();
    if (last && this.onlyToolResults(last)) last.parts.push(...parts);
    else this.messages.push({ role: "user", parts });
  }
}

function textOf(part: JsonObject, key: string, p: string): string {
  if (typeof part[key] !== "string") throw fieldError("invalid_request", `${p}.${key}`);
  return part[key] as string;
}

function imagePart(part: JsonObject, p: string): IRPart {
  const url = part.image_url;
  if (typeof url !== "string" || url === "") {
    if (!absent(part.file_id)) throw fieldError("unsupported_parameter", `${p}.file_id`);
    throw fieldError("invalid_request", `${p}.image_url`);
  }
  const m = DATA_URL.exec(url);
  return m ? { type: "image", mediaType: m[1], data: m[2] } : { type: "image", url };
}

function filePart(part: JsonObject, p: string): IRPart {
  if (typeof part.file_id === "string" && part.file_id !== "") return { type: "file", fileId: part.file_id };
  for (const k of ["file_data", "file_url"]) {
    if (!absent(part[k])) throw fieldError("unsupported_parameter", `${p}.${k}`);
  }
  throw fieldError("invalid_request", `${p}.file_id`);
}

function contentPart(part: unknown, role: Role, p: string): IRPart {
  if (!isObject(part)) throw fieldError("invalid_request", p);
  const type = part.type;
  // Text parts are accepted for every role (lenient: input_text in assistant history is read as text).
  if (type === "input_text" || type === "output_text") return { type: "text", text: textOf(part, "text", p) };
  if (type === "refusal" && role === "assistant") return { type: "text", text: textOf(part, "refusal", p) };
  if (type === "input_image" && role === "user") return imagePart(part, p);
  if (type === "input_file" && role === "user") return filePart(part, p);
  throw fieldError("invalid_request", `${p}.type`);
}

function messageItem(item: JsonObject, p: string, conv: Conversation): void {
  const role = item.role;
  if (typeof role !== "string" || !ROLES.includes(role)) throw fieldError("invalid_request", `${p}.role`);
  const content = item.content;
  let parts: IRPart[];
  if (typeof content === "string") parts = [{ type: "text", text: content }];
  else if (Array.isArray(content)) {
    parts = content.map((c, j) => contentPart(c, role as Role, `${p}.content.${j}`));
  } else throw fieldError("invalid_request", `${p}.content`);

  if (role === "system" || role === "developer") {
    for (const part of parts) if (part.type === "text" && part.text !== "") conv.system.push(part.text);
  } else if (role === "assistant") conv.assistant(parts);
  else conv.user(parts);
}

function requiredString(item: JsonObject, key: string, p: string): string {
  const v = item[key];
  if (typeof v !== "string" || v === "") throw fieldError("invalid_request", `${p}.${key}`);
  return v;
}

/** A call from history; a namespace member's call is named as its flat tool is (namespace.ts). */
function functionCall(item: JsonObject, p: string, conv: Conversation): void {
  const id = requiredString(item, "call_id", p);
  const member = requiredString(item, "name", p);
  const name = absent(item.namespace) ? member : flatToolName(requiredString(item, "namespace", p), member);
  if (!absent(item.arguments) && typeof item.arguments !== "string") {
    throw fieldError("invalid_request", `${p}.arguments`);
  }
  const args = str(item.arguments) ?? "";
  conv.assistant([{ type: "tool_call", id, name, arguments: args === "" ? "{}" : args }]);
}

function functionCallOutput(item: JsonObject, p: string, conv: Conversation): void {
  const callId = requiredString(item, "call_id", p);
  const output = item.output;
  let content: string;
  if (typeof output === "string") content = output;
  else if (Array.isArray(output)) {
    content = output.map((part, k) => {
      const pp = `${p}.output.${k}`;
      if (!isObject(part)) throw fieldError("invalid_request", pp);
      if (part.type === "input_text" || part.type === "output_text") return textOf(part, "text", pp);
      if (typeof part.type !== "string") throw fieldError("invalid_request", `${pp}.type`);
      throw fieldError("unsupported_parameter", `${pp}.type`);
    }).join("\n");
  } else throw fieldError("invalid_request", `${p}.output`);
  conv.toolResult({ type: "tool_result", callId, content });
}

/** Summary texts joined (raw reasoning_text as fallback); `encrypted_content` is dropped (no signature). */
function reasoning(item: JsonObject, conv: Conversation): void {
  const texts = (key: string, type: string): string[] =>
    Array.isArray(item[key])
      ? (item[key] as unknown[]).flatMap((s) =>
        isObject(s) && s.type === type && typeof s.text === "string" ? [s.text] : []
      )
      : [];
  let parts = texts("summary", "summary_text");
  if (parts.length === 0) parts = texts("content", "reasoning_text");
  const text = parts.join("\n\n");
  if (text !== "") conv.assistant([{ type: "reasoning", text }]);
}

function item(raw: unknown, p: string, conv: Conversation): void {
  if (!isObject(raw)) throw fieldError("invalid_request", p);
  const type = raw.type ?? (raw.role !== undefined ? "message" : undefined);
  switch (type) {
    case "message":
      return messageItem(raw, p, conv);
    case "function_call":
      return functionCall(raw, p, conv);
    case "function_call_output":
      return functionCallOutput(raw, p, conv);
    case "reasoning":
      return reasoning(raw, conv);
    case "web_search_call":
      // A provider-run search the gateway showed (beta's server tools) and the client sends back with its
      // history: no upstream takes it back (a Messages upstream refuses foreign server-tool ids), so it is
      // dropped and the text around it stays (protocols §5.3). Other hosted tools' items stay refused.
      return;
    default:
      throw fieldError("invalid_request", `${p}.type`);
  }
}

export function decodeInput(input: unknown): DecodedInput {
  const conv = new Conversation();
  if (typeof input === "string") {
    conv.user([{ type: "text", text: input }]);
  } else if (Array.isArray(input) && input.length > 0) {
    input.forEach((it, i) => item(it, `input.${i}`, conv));
  } else {
    throw fieldError("invalid_request", "input");
  }
  return { system: conv.system, messages: conv.messages };
}
