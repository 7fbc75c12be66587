/**
 * GET /dashboard (the overview, or the sign-in form when signed out) and the theta switch. The overview reads the key as the admin key view
 * does (src/accounts/key_operations.ts keyView), so its balance and open holds are the view's `balance_usd` and
 * `held_usd` to the digit; what was spent this hour and today is what the key's spend caps count
 * (Accounts.spentInWindows). Caps are shown, not edited: the bot sets them. POST /dashboard/theta pauses or
 * resumes theta through the admin operation itself (applyKeyAction "theta"): the key's next theta request sees
 * it (on another process sharing the store, within KEY_REFRESH_MS).
 */
import type { App } from "../app.ts";
import { applyKeyAction, keyView } from "../accounts/key_operations.ts";
import type { Session } from "../auth/session.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { formatUsd } from "../money/usd.ts";
import type { SessionContext } from "../request/context.ts";
import { type Html, html } from "../util/html.ts";
import { checkCsrf, csrfToken } from "./csrf.ts";
import { readForm } from "./form.ts";
import { layout, utcTime } from "./layout.ts";
import { page, redirect } from "./respond.ts";
import { signInPage } from "./sign_in.ts";

type KeyView = Awaited<ReturnType<typeof keyView>>;

/** GET /dashboard: the overview when signed in, else the sign-in form. */
export function home(app: App, ctx: SessionContext): Promise<Response> {
  return ctx.session ? overview(app, ctx, ctx.session) : signInPage(app, ctx);
}

async function overview(app: App, ctx: SessionContext, session: Session): Promise<Response> {
  const now = app.now();
  const view = await keyView(app.accounts, session.account, now);
  const spent = await app.accounts.spentInWindows(session.account, now);
  const csrf = await csrfToken(session.id);
  const caps = view.caps;
  const body = html`<h1>Обзор</h1>
<section class="cards">
${card("Баланс", "balance", view.balance_usd, "доступно для новых запросов")}
${card("В резерве", "held", view.held_usd, "удержано открытыми запросами")}
${
    card(
      "Потрачено за час",
      "spent-hour",
      formatUsd(spent.hour),
      capNote(caps.hourly_spend_usd, "текущий час UTC"),
    )
  }
${card("Потрачено сегодня", "spent-day", formatUsd(spent.day), capNote(caps.daily_spend_usd, "сутки UTC"))}
</section>
${keySection(view, csrf)}
${capsSection(view)}`;
  return page(ctx, 200, layout("Обзор", body, { section: "overview", hint: view.hint, csrf }));
}

function card(title: string, testid: string, usd: string, note: string | Html): Html {
  return html`
    <div class="card stat">
      <h2>${title}</h2>
      <p class="value">$<span data-testid="${testid}">${usd}</span></p>
      <p class="muted">${note}</p>
    </div>
  `;
}

function capNote(cap: string | null, window: string): Html {
  return cap === null ? html`${window}, без лимита` : html`${window}, лимит $${cap}`;
}

const STATE_TEXT: Record<KeyView["state"], string> = {
  active: "Активен",
  expired: "Срок действия истёк",
  suspended: "Временно заморожен",
  revoked: "Отозван",
};

function keySection(view: KeyView, csrf: string): Html {
  const paused = view.theta.paused;
  const when = view.state === "expired" && view.expires_at
    ? html`
      (${utcTime(Date.parse(view.expires_at))})
    `
    : view.state === "suspended" && view.suspended_until
    ? html`
      до ${utcTime(Date.parse(view.suspended_until))}
    `
    : view.state === "active" && view.expires_at
    ? html`, действует до ${utcTime(Date.parse(view.expires_at))}`
    : "";
  return html`<section class="card">
<h2>Ключ</h2>
<p data-testid="key-state" data-state="${view.state}" data-theta-paused="${String(paused)}">
<code>${view.hint}</code> — <strong class="state-${view.state}">${STATE_TEXT[view.state]}</strong>${when}.
Theta: <strong>${paused ? "на паузе" : "работает"}</strong>.
</p>
${
    view.state === "suspended" &&
    html`<p class="muted">Замороженный ключ не принимает запросы до указанного времени.</p>`
  }
<form method="post" action="/dashboard/theta" class="inline">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="paused" value="${String(!paused)}">
<button type="submit" data-testid="theta-toggle">${
    paused ? "Возобновить theta" : "Приостановить theta"
  }</button>
</form>
<p class="muted">Пауза theta действует со следующего запроса: запросы к моделям theta получают 403 api_key_paused.</p>
</section>`;
}

function capsSection(view: KeyView): Html {
  const usd = (v: string | null) => v === null ? "без лимита" : html`$${v}`;
  const count = (v: number | null) => v === null ? "без лимита" : html`${v} запросов`;
  return html`
    <section class="card">
      <h2>Лимиты</h2>
      <table class="kv">
        <tr>
          <th>Расходы за час</th>
          <td>${usd(view.caps.hourly_spend_usd)}</td>
        </tr>
        <tr>
          <th>Расходы за сутки</th>
          <td>${usd(view.caps.daily_spend_usd)}</td>
        </tr>
        <tr>
          <th>Резерв за час</th>
          <td>${usd(view.caps.hourly_reserve_usd)}</td>
        </tr>
        <tr>
          <th>Резерв за сутки</th>
          <td>${usd(view.caps.daily_reserve_usd)}</td>
        </tr>
        <tr>
          <th>Запросы theta за час</th>
          <td>${count(view.theta.hourly_requests)}</td>
        </tr>
        <tr>
          <th>Запросы theta за сутки</th>
          <td>${count(view.theta.daily_requests)}</td>
        </tr>
      </table>
      <p class="muted">Лимиты задаются в боте; здесь они только показаны.</p>
    </section>
  `;
}

/** POST /dashboard/theta: `paused` = true | false. */
export async function setTheta(app: App, ctx: SessionContext): Promise<Response> {
  const form = await readForm(ctx.req);
  if (!ctx.session) return redirect(ctx, "/dashboard");
  await checkCsrf(form, ctx.session.id);
  const paused = form.get("paused");
  if (paused !== "true" && paused !== "false") {
    throw new GatewayError("invalid_request", { param: "paused", detail: "Ожидается true или false." });
  }
  await applyKeyAction(
    app.accounts,
    ctx.session.account.rec.id,
    "theta",
    { paused: paused === "true" },
    app.now(),
  );
  return redirect(ctx, "/dashboard");
}
