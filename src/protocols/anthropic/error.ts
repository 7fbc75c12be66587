/** The Anthropic in-stream error frame (upstream error bodies are read by ../upstream_error.ts). */
import type { ErrorObject } from "../../errors/error_object.ts";
import { sseEvent } from "../sse.ts";

/** The Messages in-stream error frame (protocols §2.8). */
export function errorFrame(err: ErrorObject): string {
  return sseEvent("error", { type: "error", error: err, request_id: err.request_id });
}
