/** Upstream error bodies and in-stream error frames (§4.7, §4.8, pitfalls 27 and 39). */
import type { UpstreamErrorInfo } from "../codec.ts";
import type { IREvent } from "../../ir/events.ts";
import { isRecord, type JsonObject, str } from "./util.ts";

const MAX_TEXT = 500;

function codeOf(v: unknown): string | undefined {
  if (typeof v === "string" && v !== "") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}

function info(message: string, type: unknown, code: unknown): UpstreamErrorInfo {
  const out: UpstreamErrorInfo = { message };
  const t = str(type);
  const c = codeOf(code);
  if (t) out.type = t;
  if (c) out.code = c;
  return out;
}

/** Non-2xx body → error info: `{error:{message,type,code}}`, `{error:"…"}`, `{detail}`, `{message}` or plain text. */
export function parseUpstreamError(status: number, bodyText: string): UpstreamErrorInfo {
  const fallback = `HTTP ${status}`;
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    const text = bodyText.trim();
    return { message: text === "" ? fallback : text.slice(0, MAX_TEXT) };
  }
  if (isRecord(json)) {
    const err = json.error;
    if (isRecord(err)) return info(str(err.message) || fallback, err.type, err.code);
    if (typeof err === "string" && err !== "") return info(err, json.type, json.code);
    const detail = json.detail;
    if (typeof detail === "string" && detail !== "") return { message: detail };
    if (isRecord(detail)) {
      const inner = isRecord(detail.error) ? detail.error : detail;
      if (str(inner.message)) return info(inner.message as string, inner.type, inner.code);
    }
    if (str(json.message)) return info(json.message as string, json.type, json.code);
  }
  const text = bodyText.trim();
  return { message: text === "" ? fallback : text.slice(0, MAX_TEXT) };
}

function irError(src: JsonObject, fallback: string): Extract<IREvent, { type: "error" }> {
  const ev: Extract<IREvent, { type: "error" }> = { type: "error", message: str(src.message) || fallback };
  const t = str(src.type);
  const c = codeOf(src.code);
  if (t && t !== "error") ev.upstreamType = t;
  if (c) ev.upstreamCode = c;
  return ev;
}

/** `event: error` data, flat or nested (`data.error ?? data`) → IR error. */
export function errorFromEvent(data: JsonObject): IREvent {
  const src = isRecord(data.error) ? data.error : data;
  return irError(src, "upstream stream error");
}

/** `response.failed` data → IR error from `response.error {code, message}`. */
export function errorFromFailed(data: JsonObject): IREvent {
  const res = isRecord(data.response) ? data.response : {};
  const src = isRecord(res.error) ? res.error : {};
  return irError(src, "upstream response failed");
}
