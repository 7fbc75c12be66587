/** Internal request model: what every surface decodes into and every upstream encoder reads from. */

/**
 * `system`: an instruction turn inside the conversation (Anthropic `role: "system"` messages, which Claude
 * Code sends), text parts only, kept at its position; top-level instructions are `IRRequest.system`.
 */
export type IRRole = "user" | "assistant" | "system";

export type IRPart =
  | { type: "text"; text: string }
  /** Inline image (base64 `data`) or remote image (`url`). */
  | { type: "image"; mediaType?: string; data?: string; url?: string }
  /** Alpha file-store reference (spec §4.2 `input_file`), replaced by a text block before the upstream call. */
  | { type: "file"; fileId: string }
  /** A tool call the assistant made earlier (history). `arguments` is the JSON text. */
  | { type: "tool_call"; id: string; name: string; arguments: string }
  /** The client's answer to a tool call. */
  | { type: "tool_result"; callId: string; content: string; isError?: boolean }
  /** Reasoning/thinking from history; `signature` only when the producing provider gave one. */
  | { type: "reasoning"; text: string; signature?: string };

export interface IRMessage {
  role: IRRole;
  parts: IRPart[];
}

export interface IRTool {
  /** The name every upstream sees. */
  name: string;
  /**
   * Set on a member of a Responses `namespace` tool, which travels under a flat `name`: how the client
   * names it, so a call returns to it under that name (protocols/openai_responses/namespace.ts).
   */
  member?: { namespace: string; name: string };
  description?: string;
  /** JSON schema of the arguments (root object). */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type IRToolChoice =
  | { type: "auto" }
  | { type: "none" }
  | { type: "required" }
  | { type: "tool"; name: string };

export interface IRRequest {
  model: string;
  /** System / developer / instructions text, in order. */
  system: string[];
  messages: IRMessage[];
  stream: boolean;
  /** Chat Completions `stream_options.include_usage` as the client asked it. */
  includeUsage: boolean;
  /** Output budget as the client gave it; undefined when omitted. */
  maxOutputTokens?: number;
  tools: IRTool[];
  toolChoice?: IRToolChoice;
  parallelToolCalls?: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop: string[];
  /** Reasoning effort (`reasoning_effort`, `reasoning.effort`, or derived from a thinking budget). */
  reasoningEffort?: string;
  /** Anthropic-style thinking budget when the client gave one. */
  thinkingBudget?: number;
  /** End-user id (`metadata.user_id`, `user`, `safety_identifier`). */
  user?: string;
  /**
   * The client offered the provider's own web search (a Responses `{type:"web_search"}` tool, which Codex sends
   * by default): where it sat in `tools`, and its options. Each family's policy decides what it becomes.
   */
  hostedWebSearch?: { param: string; searchContextSize?: string; userLocation?: Record<string, unknown> };
  /** OpenAI `prompt_cache_key`: routes the prompt to the provider's cache (spec §4.2: forwarded unchanged). */
  promptCacheKey?: string;
}

/**
 * A request's parameters without its conversation (`messages`, `system`): all an answer's encoder reads of it
 * (Chat's includeUsage, the tools a call answers to, Responses' echo fields). An encoder lives as long as its
 * stream; holding only this, a stream does not keep its prompt alive (docs/performance.md "Idle streams: what
 * one holds").
 */
export type IRRequestParams = Omit<IRRequest, "messages" | "system">;

export function requestParams(ir: IRRequest): IRRequestParams {
  const { messages: _messages, system: _system, ...params } = ir;
  return params;
}
