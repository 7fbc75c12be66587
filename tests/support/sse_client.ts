/** Test helpers to read a gateway SSE response into frames. */
import assert from "node:assert/strict";
import type { SseFrame } from "../../src/protocols/codec.ts";
import { replaySse } from "../../src/protocols/sse_parse.ts";

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

export type Surface = keyof typeof SURFACE_PATH;

/** Asserts the surface's one-error-frame ending and returns the error object. */
export function assertErrorEnding(surface: Surface, frames: SseFrame[], where: string) {
  const parsed = frames.map((f) => ({
    event: f.event,
    json: f.data === "[DONE]" ? "[DONE]" : JSON.parse(f.data),
  }));
  if (surface === "chat") {
    const errors = parsed.filter((p) => typeof p.json === "object" && p.json.error);
    assert.equal(errors.length, 1, where);
    assert.equal(parsed.at(-1)!.json, "[DONE]", where);
    assert.equal(parsed.at(-2)!.json, errors[0]!.json, where);
    assert.equal(errors[0]!.json.request_id, errors[0]!.json.error.request_id, where);
    return errors[0]!.json.error;
  }
  if (surface === "messages") {
    const errors = parsed.filter((p) => p.event === "error");
    assert.equal(errors.length, 1, where);
    assert.equal(parsed.at(-1)!.event, "error", where);
    assert.ok(!parsed.some((p) => p.event === "message_stop"), where);
    assert.equal(errors[0]!.json.type, "error", where);
    return errors[0]!.json.error;
  }
  const errors = parsed.filter((p) => p.event === "error");
  assert.equal(errors.length, 1, where);
  assert.equal(parsed.at(-2)!.event, "error", where);
  assert.equal(parsed.at(-1)!.event, "response.failed", where);
  assert.equal(parsed.at(-1)!.json.response.status, "failed", where);
  const seqs = parsed.map((p) => p.json.sequence_number);
  seqs.forEach((s, i) => assert.equal(s, i, `${where}: sequence_number ${i}`));
  return errors[0]!.json.error;
}

export function assertCleanEnding(surface: Surface, frames: SseFrame[], where: string) {
  const last = frames.at(-1)!;
  if (surface === "chat") assert.equal(last.data, "[DONE]", where);
  if (surface === "messages") assert.equal(last.event, "message_stop", where);
  if (surface === "responses") assert.ok(last.event === "response.completed", where);
  assert.ok(!frames.some((f) => f.event === "error" || f.data.startsWith('{"error"')), where);
}
