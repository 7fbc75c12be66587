/** Shared test helpers (fixtures, a deterministic EncodeContext). Not imported by production code. */
import type { IRRequest } from "../../../ir/request.ts";
import type { EncodeContext } from "../../codec.ts";

export function fixture(name: string): Promise<string> {
  return Deno.readTextFile(new URL(`./fixtures/${name}`, import.meta.url));
}

export function irRequest(over: Partial<IRRequest> = {}): IRRequest {
  return {
    model: "gw-model",
    system: [],
    messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    stream: true,
    includeUsage: false,
    tools: [],
    stop: [],
    ...over,
  };
}

export function testCtx(request: Partial<IRRequest> = {}): EncodeContext {
  let n = 0;
  return {
    requestId: "req_test",
    model: "gw-model",
    now: () => 1700000000,
    newId: (prefix: string) => `${prefix}test${++n}`,
    request: irRequest(request),
  };
}

/** Parses every `data:` payload of encoder output (JSON, or the literal [DONE]). */
export function dataFrames(sse: string): unknown[] {
  return sse.split("\n\n").filter((f) => f !== "").map((f) => {
    if (!f.startsWith("data: ")) throw new Error(`not a data frame: ${f}`);
    const d = f.slice(6);
    return d === "[DONE]" ? d : JSON.parse(d);
  });
}
