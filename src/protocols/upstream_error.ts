/**
 * Reads a non-2xx upstream body leniently (protocols §6 pitfall 39), the same way for every protocol:
 * `{error:{message,type,code}}` (OpenAI; Anthropic nests the same object under `{type:"error"}`),
 * `{error:"…"}`, `{detail}`, `{message}` or plain text. Never throws.
 */
import { isObject } from "../util/json.ts";
import type { UpstreamErrorInfo } from "./codec.ts";

const MAX_TEXT = 500;

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const code = (v: unknown) => text(v) ?? (typeof v === "number" && Number.isFinite(v) ? String(v) : undefined);

function info(message: string, type: unknown, c: unknown): UpstreamErrorInfo {
  const out: UpstreamErrorInfo = { message };
  const t = text(type);
  const k = code(c);
  if (t) out.type = t;
  if (k) out.code = k;
  return out;
}

export function parseUpstreamError(status: number, bodyText: string): UpstreamErrorInfo {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    json = undefined;
  }
  if (isObject(json)) {
    const err = json.error;
    if (isObject(err)) return info(text(err.message) ?? JSON.stringify(err), err.type, err.code);
    if (text(err)) return info(err as string, json.type === "error" ? undefined : json.type, json.code);
    const detail = json.detail;
    if (text(detail)) return { message: detail as string };
    if (isObject(detail)) {
      const inner = isObject(detail.error) ? detail.error : detail;
      if (text(inner.message)) return info(inner.message as string, inner.type, inner.code);
    }
    if (detail !== undefined) return { message: JSON.stringify(detail).slice(0, MAX_TEXT) };
    if (text(json.message)) return info(json.message as string, json.type, json.code);
  }
  const plain = bodyText.trim().slice(0, MAX_TEXT);
  return { message: plain || `HTTP ${status}` };
}
