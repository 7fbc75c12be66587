/** Upstream error bodies and the in-stream error frame of the Chat surface. */
import type { UpstreamErrorInfo } from "../codec.ts";
import type { ErrorObject } from "../../errors/error_object.ts";
import { SSE_DONE, sseData } from "../sse.ts";
import { isObject } from "./validate.ts";

const MAX_MESSAGE = 2000;

function str(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  return undefined;
}

/** Reads `{error:{message,type,code}}`, `{error:"…"}`, `{detail}`, `{message}` or plain text, leniently. */
export function parseUpstreamError(status: number, bodyText: string): UpstreamErrorInfo {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    json = undefined;
  }
  if (isObject(json)) {
    const e = json.error;
    if (isObject(e)) {
      const info: UpstreamErrorInfo = { message: str(e.message) ?? JSON.stringify(e) };
      const type = str(e.type);
      const code = str(e.code);
      if (type !== undefined) info.type = type;
      if (code !== undefined) info.code = code;
      return info;
    }
    if (typeof e === "string") return { message: e };
    if (json.detail !== undefined) {
      return { message: typeof json.detail === "string" ? json.detail : JSON.stringify(json.detail) };
    }
    if (typeof json.message === "string") return { message: json.message };
  }
  const text = bodyText.trim().slice(0, MAX_MESSAGE);
  return { message: text || `HTTP ${status}` };
}

/** `data: {"error":…,"request_id":…}` then `data: [DONE]` (valid at any point of a Chat stream). */
export function chatErrorFrames(err: ErrorObject): string {
  return sseData({ error: err, request_id: err.request_id }) + SSE_DONE;
}
