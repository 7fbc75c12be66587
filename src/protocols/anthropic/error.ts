/** Anthropic error bodies: reading upstream errors leniently and writing the in-stream error frame. */
import type { ErrorObject } from "../../errors/error_object.ts";
import type { UpstreamErrorInfo } from "../codec.ts";
import { sseEvent } from "../sse.ts";

const MAX_TEXT = 1000;

function rec(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
}

/**
 * Reads `{type:"error", error:{type, message}}`, and also `{error:"…"}`, `{detail:…}`, `{message}`,
 * or plain text. Never throws.
 */
export function parseUpstreamError(status: number, bodyText: string): UpstreamErrorInfo {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    json = undefined;
  }
  const body = rec(json);
  const err = rec(body?.error);
  if (err) {
    const info: UpstreamErrorInfo = {
      message: typeof err.message === "string" ? err.message : JSON.stringify(err),
    };
    if (typeof err.type === "string") info.type = err.type;
    if (typeof err.code === "string") info.code = err.code;
    return info;
  }
  if (typeof body?.error === "string") return { message: body.error };
  if (body && body.detail !== undefined) {
    return { message: typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail) };
  }
  if (typeof body?.message === "string") return { message: body.message };
  const text = bodyText.trim();
  return { message: text ? text.slice(0, MAX_TEXT) : `HTTP ${status}` };
}

/** The Messages in-stream error frame (§2.8). */
export function errorFrame(err: ErrorObject): string {
  return sseEvent("error", { type: "error", error: err, request_id: err.request_id });
}
