/** The full Response object (protocols §4.5) with request echo fields, shared by JSON and stream encoders. */
import type { EncodeContext } from "../codec.ts";
import { toolChoiceToWire, toolsToWire } from "./tools.ts";

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseFields {
  id: string;
  createdAt: number;
  status: ResponseStatus;
  output: unknown[];
  /** Wire usage, or null while in progress / when unknown. */
  usage: Record<string, unknown> | null;
  completedAt?: number | null;
  error?: { code: string; message: string } | null;
  incompleteReason?: string | null;
}

export function responseObject(ctx: EncodeContext, f: ResponseFields): Record<string, unknown> {
  const req = ctx.request;
  return {
    id: f.id,
    object: "response",
    created_at: f.createdAt,
    status: f.status,
    background: false,
    completed_at: f.completedAt ?? null,
    error: f.error ?? null,
    incomplete_details: f.incompleteReason ? { reason: f.incompleteReason } : null,
    instructions: null,
    max_output_tokens: req.maxOutputTokens ?? null,
    model: ctx.model,
    output: f.output,
    parallel_tool_calls: req.parallelToolCalls ?? true,
    previous_response_id: null,
    reasoning: { effort: req.reasoningEffort ?? null, summary: null },
    store: false,
    temperature: req.temperature ?? 1,
    text: { format: { type: "text" } },
    tool_choice: toolChoiceToWire(req.toolChoice) ?? "auto",
    tools: toolsToWire(req.tools),
    top_p: req.topP ?? 1,
    truncation: "disabled",
    usage: f.usage,
    user: null,
    metadata: {},
  };
}
