/**
 * Edits of a native body on the client's bytes. Beta's server prompt on a native Messages body (src/protocols/anthropic/system_prefix.ts): spliced into
 * the client's bytes, against re-serialising the parsed body, over a ~1 MiB body whose `system` comes last
 * (the scan then crosses the whole conversation: the worst case).
 */
import { prefixSystemBytes } from "../src/protocols/anthropic/system_prefix.ts";
import { ObjectEdits, scanObject } from "../src/util/json_span.ts";
import { bigBody } from "./estimate_bench.ts";

export interface PrefixResult {
  bodyBytes: number;
  runs: number;
  spliceMedianMs: number;
  stringifyMedianMs: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(runs: number, fn: () => void): number {
  for (let i = 0; i < 20; i++) fn(); // warm-up (JIT)
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

export function benchSystemPrefix(runs = 200): PrefixResult {
  const chat = JSON.parse(bigBody()) as { messages: unknown[] };
  const body = {
    model: "beta-sonnet-5",
    max_tokens: 1024,
    messages: chat.messages.slice(1),
    system: [{ type: "text", text: "Ты агент.", cache_control: { type: "ephemeral" } }],
  };
  const raw = new TextEncoder().encode(JSON.stringify(body));
  const prompt = "Отвечай на русском языке.";
  return {
    bodyBytes: raw.byteLength,
    runs,
    spliceMedianMs: time(runs, () => prefixSystemBytes(new ObjectEdits(raw, scanObject(raw)), body, prompt)),
    stringifyMedianMs: time(runs, () => new TextEncoder().encode(JSON.stringify(body))),
  };
}

/**
 * The members a native request gets from the gateway (src/engine/generate.ts `nativeBody`: here a streamed Chat
 * request's `stream_options`) put into the client's ~1 MiB body in place, against re-serialising the object.
 */
export function benchMemberSplice(runs = 200): PrefixResult {
  const body = { ...JSON.parse(bigBody()) as Record<string, unknown>, stream: true };
  const raw = new TextEncoder().encode(JSON.stringify(body));
  const changes = { stream_options: { include_usage: true } };
  return {
    bodyBytes: raw.byteLength,
    runs,
    spliceMedianMs: time(runs, () => {
      const edits = new ObjectEdits(raw, scanObject(raw));
      for (const [name, value] of Object.entries(changes)) edits.set(name, value);
      return edits.bytes();
    }),
    stringifyMedianMs: time(runs, () => new TextEncoder().encode(JSON.stringify({ ...body, ...changes }))),
  };
}
