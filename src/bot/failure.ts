/** What a failure says in the bot's log lines (docs/operator-guide.md "Operating": no secrets in logs). */
import { GrammyError, HttpError } from "grammy";
import { GatewayError } from "../errors/gateway_error.ts";

/**
 * What a failure says in a log line: the Bot API's code and description (GrammyError), grammY's own message
 * for a network failure (HttpError: "Network request for 'getMe' failed!"), a gateway error's code, another
 * error's class and message — but never a fetch error's message (a TypeError), which quotes the URL and so
 * the bot token.
 */
export function failure(err: unknown): Record<string, unknown> {
  if (err instanceof GrammyError) return { error_code: err.error_code, error: err.description };
  if (err instanceof HttpError) return { error: err.message };
  if (err instanceof GatewayError) return { error: err.code };
  if (err instanceof Error && !(err instanceof TypeError)) return { error: err.name, detail: err.message };
  return { error: err instanceof Error ? err.name : typeof err };
}
