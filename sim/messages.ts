/** Anthropic Messages upstream (§2.6–2.8). */

import { type Inspect, pieces, type Plan, promptTokensOf, rangePieces, type ToolOffer } from "./answer.ts";
import type { Frames, Protocol } from "./pipeline.ts";
import { CHECKPOINT, FINAL, type Frame, newId, type SimState } from "./stream.ts";
import { contentText, lastTurn, numberOr } from "./turn.ts";

type Obj = Record<string, any>;

export const SIGNATURE = "sig_sim";
/** At most this many server_tool_use / result pairs of each server tool are emitted. */
export const MAX_SEARCH_BLOCKS = 10;
/** `retrieved_at` of every simulated web fetch. */
export const FETCHED_AT = "2025-01-01T00:00:00.000000+00:00";

function tools(body: Obj): ToolOffer {
  const names: string[] = [];
  let webSearch = false;
  let webFetch = false;
  if (Array.isArray(body.tools)) {
    for (const t of body.tools) {
      if (typeof t?.type === "string" && t.type.startsWith("web_search")) webSearch = true;
      else if (typeof t?.type === "string" && t.type.startsWith("web_fetch")) webFetch = true;
      else if ((t?.type === undefined || t.type === "custom") && typeof t?.name === "string") {
        names.push(t.name);
      }
    }
  }
  const tc = body.tool_choice;
  switch (tc?.type) {
    case "none":
      return { names, choice: "none", webSearch, webFetch };
    case "any":
      return { names, choice: "any", webSearch, webFetch };
    case "tool":
      if (typeof tc.name === "string") return { names, choice: "named", name: tc.name, webSearch, webFetch };
  }
  return { names, choice: "auto", webSearch, webFetch };
}

function stopReason(plan: Plan): string {
  return plan.refusal ? "refusal" : plan.tool ? "tool_use" : plan.truncated ? "max_tokens" : "end_turn";
}

/** The structured refusal's details (protocols §2.6 `stop_details`), or null. */
function stopDetails(plan: Plan): Obj | null {
  return plan.refusal ? REFUSAL_DETAILS : null;
}

export const REFUSAL_DETAILS = {
  type: "refusal",
  category: "cyber",
  explanation: "Запрос похож на попытку вредоносной кибератаки.",
};

function searchBlocks(plan: Plan): number {
  return plan.webSearch ? Math.min(plan.searches, MAX_SEARCH_BLOCKS) : 0;
}

function fetchBlocks(plan: Plan): number {
  return plan.webFetch ? Math.min(plan.fetches, MAX_SEARCH_BLOCKS) : 0;
}

const searchTitle = (plan: Plan, i: number) => `Результат поиска ${i + 1}: ${plan.query}`;
const searchUrl = (i: number) => `https://example.com/sim/search/${i + 1}`;

function searchResult(plan: Plan, i: number): Obj[] {
  return [{
    type: "web_search_result",
    title: searchTitle(plan, i),
    url: searchUrl(i),
    encrypted_content: "sim_encrypted_content",
    page_age: null,
  }];
}

/** The `content` of the i-th web_search_tool_result: one result, none, or an error (spec §4.5 rules 8, 10). */
function searchContent(plan: Plan, i: number): Obj[] | Obj {
  if (plan.searchError) return { type: "web_search_tool_result_error", error_code: plan.searchError };
  return plan.searchEmpty ? [] : searchResult(plan, i);
}

/** The `content` of the i-th web_fetch_tool_result: the page as a text document, or an error. */
function fetchContent(plan: Plan, i: number): Obj {
  if (plan.fetchError) return { type: "web_fetch_tool_result_error", error_code: plan.fetchError };
  return {
    type: "web_fetch_result",
    url: plan.fetchUrl,
    retrieved_at: FETCHED_AT,
    content: {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: `Текст страницы ${plan.fetchUrl} (${i + 1}).` },
      title: `Страница ${i + 1}: ${plan.fetchUrl}`,
    },
  };
}

/** One server tool call and its result block. */
interface ServerPair {
  use: { type: "server_tool_use"; id: string; name: string; input: Obj };
  result: Obj;
}

/** The searches, then the fetches, in output order (fresh ids). */
function serverPairs(plan: Plan, state: SimState): ServerPair[] {
  const out: ServerPair[] = [];
  for (let i = 0; i < searchBlocks(plan); i++) {
    const id = newId(state, "srvtoolu_");
    out.push({
      use: { type: "server_tool_use", id, name: "web_search", input: { query: plan.query } },
      result: { type: "web_search_tool_result", tool_use_id: id, content: searchContent(plan, i) },
    });
  }
  for (let i = 0; i < fetchBlocks(plan); i++) {
    const id = newId(state, "srvtoolu_");
    out.push({
      use: { type: "server_tool_use", id, name: "web_fetch", input: { url: plan.fetchUrl } },
      result: { type: "web_fetch_tool_result", tool_use_id: id, content: fetchContent(plan, i) },
    });
  }
  return out;
}

/** Citations of the answer: one per search that found its result (none after errors or empty searches). */
function citations(plan: Plan): Obj[] {
  if (plan.searchError || plan.searchEmpty) return [];
  const out: Obj[] = [];
  for (let i = 0; i < searchBlocks(plan); i++) {
    out.push({
      type: "web_search_result_location",
      cited_text: `Фрагмент результата ${i + 1}: ${plan.query}`,
      url: searchUrl(i),
      title: searchTitle(plan, i),
      encrypted_index: `sim_encrypted_index_${i + 1}`,
    });
  }
  return out;
}

/** The answer's text blocks as word ranges; `citations` null on an uncited block. */
function textBlocks(plan: Plan): { from: number; to: number; citations: Obj[] | null }[] {
  const n = plan.textTokens;
  if (n === 0) return [];
  const cites = citations(plan);
  if (cites.length === 0) return [{ from: 0, to: n, citations: null }];
  if (plan.citeSplit && n >= 2) {
    const half = Math.floor(n / 2);
    return [{ from: 0, to: half, citations: null }, { from: half, to: n, citations: cites }];
  }
  return [{ from: 0, to: n, citations: cites }];
}

/** Final usage. `start` is the smaller message_start form. */
export function anthropicUsage(plan: Plan, start = false): Obj {
  const z = plan.usage === "zero";
  const cached = z ? 0 : plan.cached;
  const u: Obj = {
    input_tokens: z ? 0 : plan.promptTokens - cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
  if (start) {
    u.cache_creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    u.output_tokens = z ? 0 : 1;
    u.service_tier = "standard";
    return u;
  }
  u.output_tokens = z ? 0 : plan.outputTokens;
  u.output_tokens_details = { thinking_tokens: z ? 0 : plan.reasoningTokens };
  if (plan.searches > 0 || plan.fetches > 0) {
    u.server_tool_use = {
      web_search_requests: z ? 0 : plan.billedSearches,
      web_fetch_requests: z ? 0 : plan.fetches,
    };
  }
  return u;
}

function json(plan: Plan, _body: Obj, state: SimState): unknown {
  const content: Obj[] = [];
  if (plan.reasoningTokens > 0) {
    content.push({
      type: "thinking",
      thinking: plan.reasoning.slice(0, plan.reasoningTokens),
      signature: SIGNATURE,
    });
  }
  for (const pair of serverPairs(plan, state)) content.push(pair.use, pair.result);
  if (plan.tool) {
    content.push({
      type: "tool_use",
      id: newId(state, "toolu_"),
      name: plan.tool.name,
      input: JSON.parse(plan.tool.args),
    });
  } else {
    for (const b of textBlocks(plan)) {
      const text = plan.text.slice(b.from, b.to);
      content.push(b.citations ? { type: "text", text, citations: b.citations } : { type: "text", text });
    }
  }
  const out: Obj = {
    id: newId(state, "msg_"),
    type: "message",
    role: "assistant",
    model: plan.model,
    content,
    stop_reason: stopReason(plan),
    stop_sequence: null,
    stop_details: stopDetails(plan),
  };
  if (plan.usage !== "none") out.usage = { ...anthropicUsage(plan), service_tier: "standard" };
  return out;
}

const ev = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
const blockStart = (i: number, block: string) =>
  ev("content_block_start", `{"type":"content_block_start","index":${i},"content_block":${block}}`);
const blockDelta = (i: number, delta: string) =>
  ev("content_block_delta", `{"type":"content_block_delta","index":${i},"delta":${delta}}`);
const blockStop = (i: number) => ev("content_block_stop", `{"type":"content_block_stop","index":${i}}`);

function* frames(plan: Plan, _body: Obj, state: SimState): Generator<Frame> {
  const message: Obj = {
    id: newId(state, "msg_"),
    type: "message",
    role: "assistant",
    model: plan.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  if (plan.usage !== "none") message.usage = anthropicUsage(plan, true);
  yield ev("message_start", `{"type":"message_start","message":${JSON.stringify(message)}}`);
  yield ev("ping", `{"type":"ping"}`);
  let index = 0;
  if (plan.reasoningTokens > 0) {
    yield blockStart(index, `{"type":"thinking","thinking":"","signature":""}`);
    for (const p of pieces(plan.reasoning, plan.reasoningTokens)) {
      yield blockDelta(index, `{"type":"thinking_delta","thinking":${JSON.stringify(p)}}`);
      yield CHECKPOINT;
    }
    yield blockDelta(index, `{"type":"signature_delta","signature":"${SIGNATURE}"}`);
    yield blockStop(index++);
  }
  for (const { use, result } of serverPairs(plan, state)) {
    yield blockStart(index, `{"type":"server_tool_use","id":"${use.id}","name":"${use.name}","input":{}}`);
    const q = JSON.stringify(JSON.stringify(use.input));
    yield blockDelta(index, `{"type":"input_json_delta","partial_json":${q}}`);
    yield blockStop(index++);
    yield blockStart(index, JSON.stringify(result));
    yield blockStop(index++);
  }
  if (plan.tool) {
    const t = plan.tool;
    yield blockStart(
      index,
      `{"type":"tool_use","id":"${newId(state, "toolu_")}","name":${JSON.stringify(t.name)},"input":{}}`,
    );
    for (const f of t.fragments) {
      yield blockDelta(index, `{"type":"input_json_delta","partial_json":${JSON.stringify(f)}}`);
      yield CHECKPOINT;
    }
    yield blockStop(index++);
  } else {
    for (const b of textBlocks(plan)) {
      // A cited block starts with an empty citations list and receives citations_delta (protocols §2.7).
      yield blockStart(
        index,
        b.citations ? `{"type":"text","text":"","citations":[]}` : `{"type":"text","text":""}`,
      );
      for (const c of b.citations ?? []) {
        yield blockDelta(index, `{"type":"citations_delta","citation":${JSON.stringify(c)}}`);
      }
      for (const p of rangePieces(plan.text, b.from, b.to, plan.textTokens)) {
        yield blockDelta(index, `{"type":"text_delta","text":${JSON.stringify(p)}}`);
        yield CHECKPOINT;
      }
      yield blockStop(index++);
    }
  }
  yield FINAL;
  const usage = plan.usage === "none" ? "" : `,"usage":${JSON.stringify(anthropicUsage(plan))}`;
  yield ev(
    "message_delta",
    `{"type":"message_delta","delta":{"stop_reason":"${stopReason(plan)}","stop_sequence":null,` +
      `"stop_details":${JSON.stringify(stopDetails(plan))}}${usage}}`,
  );
  yield ev("message_stop", `{"type":"message_stop"}`);
}

const ERROR_FRAME = ev(
  "error",
  `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
);

export const messages: Protocol = {
  flavor: "anthropic",
  validate(body) {
    if (typeof body.model !== "string" || !body.model) return "model: Field required";
    if (!Array.isArray(body.messages)) return "messages: Field required";
    if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 0) {
      return "max_tokens: Field required";
    }
    return null;
  },
  inspect(body: Obj): Inspect {
    const msgs = body.messages as Obj[];
    return {
      model: body.model,
      stream: body.stream === true,
      budget: numberOr(body.max_tokens),
      promptTokens: promptTokensOf(body.system, msgs, body.tools),
      turn: lastTurn(
        msgs,
        (m) => {
          if (m?.role !== "user") return undefined;
          const c = m.content;
          return Array.isArray(c) && c.some((b: Obj) => b?.type === "tool_result") ? "tool" : "user";
        },
        (m) => contentText(m.content),
      ),
      tools: tools(body),
    };
  },
  json,
  stream(plan, body, state): Frames {
    return { frames: frames(plan, body, state), errorFrames: () => ERROR_FRAME };
  },
};
