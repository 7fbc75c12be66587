/** The dashboard's answers: an HTML page, or a 303 redirect (after a form, or to the sign-in form). */
import type { RouteContext } from "../request/context.ts";
import type { Html } from "../util/html.ts";

/** The answer's headers: the request's own (the security headers among them, server.ts) and `extra`. */
function headersOf(ctx: RouteContext, extra: Record<string, string>, cookies: readonly string[]): Headers {
  const h = new Headers({ "request-id": ctx.requestId, ...ctx.headers, ...extra });
  for (const c of cookies) h.append("set-cookie", c);
  return h;
}

export function page(
  ctx: RouteContext,
  status: number,
  body: Html,
  opts: { cookies?: readonly string[]; headers?: Record<string, string> } = {},
): Response {
  return new Response(body.text, {
    status,
    headers: headersOf(
      ctx,
      { "content-type": "text/html; charset=utf-8", ...opts.headers },
      opts.cookies ?? [],
    ),
  });
}

/** 303 See Other: the browser follows with a GET, so reloading the next page never posts a form again. */
export function redirect(ctx: RouteContext, location: string, cookies: readonly string[] = []): Response {
  return new Response(null, { status: 303, headers: headersOf(ctx, { location }, cookies) });
}
