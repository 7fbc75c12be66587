/** Chat content parts (client side) → internal parts. */
import type { IRPart } from "../../ir/request.ts";
import { isObject } from "../../util/json.ts";
import { fail } from "./validate.ts";

const DATA_URL = /^data:([^;,]+)(;base64)?,(.*)$/s;

function bytesToBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** An image URL (data URL or http(s)) → internal image part; anything else is refused at `param`. */
export function decodeImageUrl(url: string, param: string): IRPart {
  const m = DATA_URL.exec(url);
  if (m) {
    const [, mediaType = "", base64, payload = ""] = m;
    if (base64) return { type: "image", mediaType, data: payload };
    let decoded: string;
    try {
      decoded = decodeURIComponent(payload);
    } catch {
      return fail(param);
    }
    return { type: "image", mediaType, data: bytesToBase64(new TextEncoder().encode(decoded)) };
  }
  if (/^https?:\/\/\S+$/i.test(url)) return { type: "image", url };
  return fail(param);
}

function decodeFileId(v: unknown, param: string): IRPart {
  if (typeof v !== "string" || v === "") fail(param);
  return { type: "file", fileId: v };
}

/** One element of a content array. `role` decides which part types are allowed. */
export function decodePart(raw: unknown, role: "user" | "assistant" | "text", param: string): IRPart {
  if (!isObject(raw)) fail(param);
  const type = raw.type;
  if (type === "text") {
    if (typeof raw.text !== "string") fail(`${param}.text`);
    return { type: "text", text: raw.text };
  }
  if (role === "assistant" && type === "refusal") {
    if (typeof raw.refusal !== "string") fail(`${param}.refusal`);
    return { type: "text", text: raw.refusal };
  }
  if (role !== "user") fail(`${param}.type`);
  switch (type) {
    case "image_url": {
      const img = raw.image_url;
      if (!isObject(img)) fail(`${param}.image_url`);
      if (typeof img.url !== "string") fail(`${param}.image_url.url`);
      return decodeImageUrl(img.url, `${param}.image_url.url`);
    }
    case "input_file":
      return decodeFileId(raw.file_id, `${param}.file_id`);
    case "file": {
      const file = raw.file;
      if (!isObject(file)) fail(`${param}.file`);
      return decodeFileId(file.file_id, `${param}.file.file_id`);
    }
    default:
      return fail(`${param}.type`);
  }
}

/**
 * `content` of a message: a string or an array of parts. Returns the parts (a string becomes one
 * text part). Empty arrays are refused.
 */
export function decodeContent(raw: unknown, role: "user" | "assistant" | "text", param: string): IRPart[] {
  if (typeof raw === "string") return [{ type: "text", text: raw }];
  if (!Array.isArray(raw) || raw.length === 0) fail(param);
  return raw.map((p, i) => decodePart(p, role, `${param}.${i}`));
}

/** Text-only content (system, developer, tool) joined into one string. */
export function decodeTextContent(raw: unknown, param: string): string {
  return decodeContent(raw, "text", param).map((p) => p.type === "text" ? p.text : "").join("");
}
