/** Output item shapes (protocols §4.5) shared by the JSON and the stream encoders. */

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: "output_text", annotations: [], logprobs: [], text };
}

/** `text === undefined` gives the empty item of `output_item.added`. */
export function messageItem(id: string, status: ItemStatus, text?: string): Record<string, unknown> {
  return {
    id,
    type: "message",
    status,
    content: text === undefined ? [] : [outputTextPart(text)],
    role: "assistant",
  };
}

export function reasoningItem(id: string, text?: string): Record<string, unknown> {
  return { id, type: "reasoning", summary: text === undefined ? [] : [{ type: "summary_text", text }] };
}

/** A call as the client names it: a namespace member with its `namespace` (namespace.ts). */
export interface ClientCall {
  callId: string;
  name: string;
  namespace?: string;
}

export function functionCallItem(
  id: string,
  status: ItemStatus,
  call: ClientCall,
  args: string,
): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id,
    type: "function_call",
    status,
    arguments: args,
    call_id: call.callId,
    name: call.name,
  };
  if (call.namespace !== undefined) item.namespace = call.namespace;
  return item;
}

/** A finished call never carries empty arguments (protocols §6 pitfall 7). */
export function finalArguments(args: string): string {
  return args === "" ? "{}" : args;
}
