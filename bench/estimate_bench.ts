/**
 * Per-body walks of the request path over a ~1 MiB request body, in-process: count_tokens' and the reserve's
 * estimator (estimateInputTokens), and the scan a native body's bytes pass before they go upstream
 * (scanObject: the repeated-name check and the top-level values).
 */
import { estimateInputTokens } from "../src/billing/estimate.ts";
import { MAX_BODY_DEPTH, membersWithinDepth } from "../src/util/json_depth.ts";
import { scanObject } from "../src/util/json_span.ts";

export interface EstimateResult {
  shape: string;
  bodyBytes: number;
  runs: number;
  medianMs: number;
  p99Ms: number;
  /** JSON.parse of the same body, for scale (the gateway parses before it estimates). */
  parseMedianMs: number;
  /** scanObject over the same body's bytes. */
  repeatsMedianMs: number;
  tokens: number;
}

const LINE = "Съешь же ещё этих мягких французских булок, да выпей чаю. The quick brown fox jumps. ";

/** A chat-style body of ~`targetBytes` bytes: many turns, some with content-part arrays. */
export function bigBody(targetBytes = 1 << 20): string {
  const messages: unknown[] = [{ role: "system", content: "You are a helpful assistant." }];
  let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    const text = LINE.repeat(20 + (i % 7) * 5);
    const role = i % 2 === 0 ? "user" : "assistant";
    const content = i % 3 === 0 ? [{ type: "text", text }, { type: "text", text: `turn ${i}` }] : text;
    messages.push({ role, content });
    size += new TextEncoder().encode(text).byteLength + 40;
  }
  return JSON.stringify({ model: "k3", max_tokens: 1024, messages });
}

/** A tool-heavy body of ~`targetBytes`: thousands of small objects and short strings (worst case walk). */
export function manyPartsBody(targetBytes = 1 << 20): string {
  const messages: unknown[] = [];
  let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    const parts = Array.from({ length: 8 }, (_, j) => ({ type: "text", text: `part ${i}.${j} fox` }));
    messages.push({ role: i % 2 === 0 ? "user" : "assistant", content: parts });
    size += JSON.stringify(parts).length + 40;
  }
  return JSON.stringify({ model: "k3", max_tokens: 1024, messages });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export function benchEstimate(shape: "turns" | "parts", runs = 200): EstimateResult {
  const text = shape === "turns" ? bigBody() : manyPartsBody();
  const body = JSON.parse(text) as Record<string, unknown>;
  const turns = (body.messages as unknown[]).length;
  let tokens = 0;
  for (let i = 0; i < 20; i++) tokens = estimateInputTokens(body); // warm-up (JIT)
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    tokens = estimateInputTokens(body);
    times.push(performance.now() - t0);
  }
  const raw = new TextEncoder().encode(text);
  const members = membersWithinDepth(body, MAX_BODY_DEPTH);
  const repeats: number[] = [];
  for (let i = 0; i < runs + 20; i++) {
    const t0 = performance.now();
    if (scanObject(raw).members !== members) throw new Error("the bench body repeats a name");
    if (i >= 20) repeats.push(performance.now() - t0); // the first 20: warm-up (JIT)
  }
  const parses: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    JSON.parse(text);
    parses.push(performance.now() - t0);
  }
  const sorted = [...times].sort((a, b) => a - b);
  return {
    shape: shape === "turns" ? `${turns} chat turns` : `${turns * 8} small text parts`,
    bodyBytes: new TextEncoder().encode(text).byteLength,
    runs,
    medianMs: median(times),
    p99Ms: sorted[Math.ceil(0.99 * sorted.length) - 1]!,
    parseMedianMs: median(parses),
    repeatsMedianMs: median(repeats),
    tokens,
  };
}
