/** Helpers for the simulator tests (not a test file itself). */

import { EventSourceParserStream } from "eventsource-parser/stream";
import { type Simulator, startSimulator } from "./server.ts";

export interface Sse {
  event?: string;
  data: string;
}

export const OPENAI_AUTH = { authorization: "Bearer sk-test" };
export const ANTHROPIC_AUTH = { "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01" };

export function authFor(path: string): Record<string, string> {
  return path.startsWith("/v1/messages") ? ANTHROPIC_AUTH : OPENAI_AUTH;
}

/** Start a simulator, run `fn`, always close it. */
export async function withSim(fn: (sim: Simulator) => Promise<void>): Promise<void> {
  const sim = await startSimulator();
  try {
    await fn(sim);
  } finally {
    await sim.close();
  }
}

export function post(
  sim: Simulator,
  path: string,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(sim.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(init.headers ?? authFor(path)) },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal,
  });
}

/** Parse a whole SSE body with eventsource-parser. */
export async function readSse(res: Response): Promise<Sse[]> {
  const out: Sse[] = [];
  const events = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const e of events) out.push({ event: e.event, data: e.data });
  return out;
}

/** JSON payloads of all events except a literal `[DONE]`. */
export function payloads(events: Sse[]): any[] {
  return events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data));
}

/** Words in a text, the way the simulator counts output tokens. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Anthropic request helper. */
export function anthropicBody(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "claude-sim", max_tokens: 1024, messages: [{ role: "user", content: text }], ...extra };
}

export function chatBody(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "gpt-sim", messages: [{ role: "user", content: text }], ...extra };
}

export function responsesBody(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "gpt-resp-sim", input: text, ...extra };
}

export const TOOL_DEFS = {
  chat: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
  anthropic: [{ name: "lookup", input_schema: { type: "object", properties: {} } }],
  responses: [{ type: "function", name: "lookup", parameters: { type: "object", properties: {} } }],
};

export function waitFor(cond: () => boolean, ms = 2000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (cond()) return resolve();
      if (Date.now() - start > ms) return reject(new Error("waitFor timed out"));
      setTimeout(tick, 10);
    };
    tick();
  });
}
