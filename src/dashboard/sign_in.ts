/**
 * Signing in and out of the dashboard. POST /dashboard/login takes the key from the form (never a
 * URL, never echoed back, never logged) and answers with the `gw_session` cookie (src/auth/session.ts) and a
 * 303 to /dashboard. Its checks, in order: the body's size (413), the CSRF field against the sign-in nonce
 * (403 csrf_failed), the address's failed sign-ins (429 dashboard_login_rate_limit, for any key), then the
 * key: unknown or revoked → the form again, 401, counted as a failure. An expired, suspended or paused key,
 * or one with no balance left, signs in (its holder can see why it is refused).
 */
import type { App } from "../app.ts";
import { findKey } from "../auth/authenticate.ts";
import { endSession, maySignIn, SESSION_COOKIE, startSession } from "../auth/session.ts";
import { errorObject } from "../errors/error_object.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { SessionContext } from "../request/context.ts";
import { readCookie, setCookie } from "../util/cookies.ts";
import { html } from "../util/html.ts";
import { checkCsrf, CSRF_COOKIE, csrfToken, isNonce, newNonce } from "./csrf.ts";
import { readForm } from "./form.ts";
import { layout } from "./layout.ts";
import { loginFailed, loginRefusal } from "./login_limit.ts";
import { page, redirect } from "./respond.ts";

/** A session's lifetime as the form states it: whole hours, or minutes below an hour. */
const lifetime = (ms: number) =>
  ms >= 3_600_000 ? `${Math.round(ms / 3_600_000)} ч` : `${Math.max(1, Math.round(ms / 60_000))} мин`;

/** The dashboard's cookies live under its path only. */
const COOKIE_PATH = "/dashboard";

const cookie = (ctx: SessionContext, name: string, value: string, maxAgeMs: number) =>
  setCookie(name, value, {
    path: COOKIE_PATH,
    maxAgeSeconds: Math.floor(maxAgeMs / 1000),
    secure: ctx.https,
  });

/**
 * The sign-in form, with the CSRF token of the browser's sign-in nonce (a new nonce and its cookie when it has
 * none); `error` says why the last attempt was refused (its code also in `data-error-code`).
 */
export async function signInPage(
  app: App,
  ctx: SessionContext,
  status = 200,
  error?: GatewayError,
): Promise<Response> {
  const held = readCookie(ctx.req.headers.get("cookie"), CSRF_COOKIE);
  const nonce = isNonce(held) ? held : newNonce();
  const cookies = nonce === held
    ? []
    : [cookie(ctx, CSRF_COOKIE, nonce, app.config.DASHBOARD_SESSION_TTL_MS)];
  const shown = error && errorObject(error, ctx.requestId);
  const body = html`<section class="card">
<h1>Вход в панель ключа</h1>
<p>Панель показывает баланс, расходы и запросы вашего ключа <code>gd-…</code> и позволяет приостановить theta.</p>
${
    shown && html`
      <div class="error" role="alert" data-testid="error" data-error-code="${shown.code}">
        <p>${shown.message}</p>
        <p>${shown.action}</p>
      </div>
    `
  }
<form method="post" action="/dashboard/login" class="stack">
<input type="hidden" name="csrf" value="${await csrfToken(nonce)}">
<label for="key">Ключ API</label>
<input id="key" name="key" type="password" autocomplete="current-password" required maxlength="200" spellcheck="false">
<button type="submit" data-testid="login">Войти</button>
</form>
<p class="muted">Панель не хранит ключ: после входа браузер держит только сессию, она действует ${
    lifetime(app.config.DASHBOARD_SESSION_TTL_MS)
  } или до выхода.</p>
</section>`;
  return page(ctx, status, layout("Вход", body), {
    cookies,
    ...(error?.retryAfter === undefined ? {} : { headers: { "retry-after": String(error.retryAfter) } }),
  });
}

/** POST /dashboard/login. */
export async function login(app: App, ctx: SessionContext): Promise<Response> {
  const form = await readForm(ctx.req);
  await checkCsrf(form, readCookie(ctx.req.headers.get("cookie"), CSRF_COOKIE));
  const refusal = loginRefusal(app, ctx.client);
  if (refusal) return signInPage(app, ctx, refusal.status, refusal);
  const acc = await findKey(form.get("key")?.trim() ?? "", app.accounts);
  if (!acc || !maySignIn(acc)) {
    loginFailed(app, ctx.client);
    const err = new GatewayError(acc ? "api_key_revoked" : "invalid_api_key");
    return signInPage(app, ctx, 401, err);
  }
  // A sign-in over an earlier session replaces it.
  if (ctx.session) await endSession(app.store, ctx.session);
  const ttl = app.config.DASHBOARD_SESSION_TTL_MS;
  const session = await startSession(app.store, acc, app.now(), ttl);
  ctx.trace.authenticated(acc.rec.id);
  return redirect(ctx, "/dashboard", [cookie(ctx, SESSION_COOKIE, session.id, ttl)]);
}

/** POST /dashboard/logout: the session ends on every process; without one, nothing to end. */
export async function logout(app: App, ctx: SessionContext): Promise<Response> {
  const form = await readForm(ctx.req);
  const clear = cookie(ctx, SESSION_COOKIE, "", 0);
  if (!ctx.session) return redirect(ctx, "/dashboard", [clear]);
  await checkCsrf(form, ctx.session.id);
  await endSession(app.store, ctx.session);
  return redirect(ctx, "/dashboard", [clear]);
}
