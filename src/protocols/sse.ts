/** SSE frame serialisation shared by every encoder and relay. */

export function sseData(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

export function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";
export const SSE_HEARTBEAT = ": keep-alive\n\n";
