/** Upstream in-stream error frames (protocols §4.7, pitfall 27); non-2xx bodies are read by ../upstream_error.ts. */
import type { IREvent } from "../../ir/events.ts";
import { isObject, type JsonObject, str } from "../../util/json.ts";

function codeOf(v: unknown): string | undefined {
  if (typeof v === "string" && v !== "") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
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
  const src = isObject(data.error) ? data.error : data;
  return irError(src, "upstream stream error");
}

/** `response.failed` data → IR error from `response.error {code, message}`. */
export function errorFromFailed(data: JsonObject): IREvent {
  const res = isObject(data.response) ? data.response : {};
  const src = isObject(res.error) ? res.error : {};
  return irError(src, "upstream response failed");
}
