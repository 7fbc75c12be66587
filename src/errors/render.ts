/**
 * Renders a GatewayError into one of the three envelopes of spec §7.1, or into the dashboard's HTML error page.
 * The only place error bodies are built.
 */
import { html } from "../util/html.ts";
import { ONE_WRITE } from "../util/one_write.ts";
import { errorSpec } from "./codes.ts";
import { type ErrorObject, errorObject } from "./error_object.ts";
import type { GatewayError } from "./gateway_error.ts";

/**
 * anthropic: Messages and count_tokens; openai: Chat Completions, Responses and the rest; detail: files and
 * usage; html: the key holder's dashboard (src/dashboard/), a page for a person rather than a program.
 */
export type Envelope = "anthropic" | "openai" | "detail" | "html";
type JsonEnvelope = Exclude<Envelope, "html">;

export function errorBody(
  err: GatewayError,
  envelope: JsonEnvelope,
  requestId: string,
): Record<string, unknown> {
  const obj: ErrorObject = errorObject(err, requestId);
  const auth = errorSpec(err.code).auth === true;
  if (envelope === "anthropic") {
    return auth
      ? { type: "error", error: obj, detail: { error: obj }, request_id: requestId }
      : { type: "error", error: obj, request_id: requestId };
  }
  if (envelope === "detail" && !auth) return { detail: { error: obj }, request_id: requestId };
  return auth
    ? { error: obj, detail: { error: obj }, request_id: requestId }
    : { error: obj, request_id: requestId };
}

export function errorHeaders(err: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { ...err.headers };
  if (err.retryAfter !== undefined) headers["retry-after"] = String(err.retryAfter);
  return headers;
}

export function errorResponse(
  err: GatewayError,
  envelope: Envelope,
  requestId: string,
  headers: Record<string, string> = {},
): Response {
  if (envelope === "html") {
    return new Response(errorPage(err, requestId), {
      status: err.status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "request-id": requestId,
        ...errorHeaders(err),
        ...headers,
      },
    });
  }
  return new Response(JSON.stringify(errorBody(err, envelope, requestId)), {
    status: err.status,
    headers: {
      "content-type": "application/json",
      ...ONE_WRITE,
      "request-id": requestId,
      ...errorHeaders(err),
      ...headers,
    },
  });
}

/**
 * The dashboard's error page: the Russian message (with the code and request id to quote, as in the JSON
 * envelopes) and the next step; the code also in `data-error-code` of the `data-testid="error"` element, for
 * scripts and tests. Styled by the dashboard's own stylesheet (its CSP allows no inline style); an empty icon,
 * as on its pages (src/dashboard/layout.ts), so the browser asks for no /favicon.ico.
 */
function errorPage(err: GatewayError, requestId: string): string {
  const obj = errorObject(err, requestId);
  return html`
    <!doctype html>
    <html lang="ru">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Ошибка — панель ключа</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css">
      </head>
      <body>
        <main class="narrow">
          <section class="card error" role="alert" data-testid="error" data-error-code="${obj.code}">
            <h1>${obj.message}</h1>
            <p>${obj.action}</p>
          </section>
          <p><a href="/dashboard">Вернуться в панель</a></p>
        </main>
      </body>
    </html>
  `.text;
}
