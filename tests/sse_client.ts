/** Test helpers to read a gateway SSE response into frames. */
import type { SseFrame } from "../src/protocols/codec.ts";
import { replaySse } from "../src/protocols/sse_parse.ts";

export async function readFrames(res: Response): Promise<{ raw: string; frames: SseFrame[] }> {
  const raw = await res.text();
  return { raw, frames: await replaySse(raw) };
}

/** The request body for a surface, with the given user text. */
export function surfaceBody(
  surface: "messages" | "chat" | "responses",
  model: string,
  text: string,
  stream = true,
) {
  if (surface === "messages") {
    return { model, max_tokens: 200, stream, messages: [{ role: "user", content: text }] };
  }
  if (surface === "chat") {
    return { model, max_tokens: 200, stream, messages: [{ role: "user", content: text }] };
  }
  return { model, max_output_tokens: 200, stream, input: text };
}

export const SURFACE_PATH = {
  messages: "/v1/messages",
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
};
