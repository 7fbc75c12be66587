/** JSON success responses; every response carries `request-id`, and goes out in one write (one_write.ts). */
import { ONE_WRITE } from "../util/one_write.ts";

export function jsonResponse(
  status: number,
  body: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...ONE_WRITE, "request-id": requestId, ...headers },
  });
}
