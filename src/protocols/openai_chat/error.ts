/** The in-stream error frame of the Chat surface (upstream error bodies: ../upstream_error.ts). */
import type { ErrorObject } from "../../errors/error_object.ts";
import { SSE_DONE, sseData } from "../sse.ts";

/** `data: {"error":…,"request_id":…}` then `data: [DONE]` (valid at any point of a Chat stream). */
export function chatErrorFrames(err: ErrorObject): string {
  return sseData({ error: err, request_id: err.request_id }) + SSE_DONE;
}
