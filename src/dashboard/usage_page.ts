/**
 * GET /dashboard/usage?range=days|hours: spend and tokens of the last 30 days or 48 hours, split by
 * family and model, as two SVG charts and a table with the same numbers (the page needs no script). Read from
 * the store's hourly sums (Store.usageHours: an index range, never a scan of rows), after this process's
 * pending settlements are flushed, as the usage report does.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { formatUsd } from "../money/usd.ts";
import type { SessionContext } from "../request/context.ts";
import { type Html, html } from "../util/html.ts";
import { csrfToken } from "./csrf.ts";
import { layout } from "./layout.ts";
import { page, redirect } from "./respond.ts";
import {
  bucketize,
  chartSvg,
  type Range,
  rangeBounds,
  type Sums,
  tokensOf,
  type UsageBuckets,
} from "./usage_chart.ts";

const RANGES: Record<Range, string> = { days: "30 дней", hours: "48 часов" };

function parseRange(params: URLSearchParams): Range {
  for (const name of params.keys()) {
    if (name !== "range") {
      throw new GatewayError("validation_error", { param: name, detail: "Неизвестный параметр." });
    }
  }
  const range = params.get("range") ?? "days";
  if (range !== "days" && range !== "hours") {
    throw new GatewayError("validation_error", { param: "range", detail: "Ожидается days или hours." });
  }
  return range;
}

export async function usagePage(app: App, ctx: SessionContext): Promise<Response> {
  if (!ctx.session) return redirect(ctx, "/dashboard");
  const range = parseRange(ctx.url.searchParams);
  const keyId = ctx.session.account.rec.id;
  const now = app.now();
  await app.accounts.committer.flush();
  const { fromMs, toMs } = rangeBounds(range, now);
  const u = bucketize(range, await app.store.usageHours(keyId, fromMs, toMs), now);
  const body = html`<h1>Расходы</h1>
<nav class="tabs">${
    (Object.keys(RANGES) as Range[]).map((r) =>
      r === range
        ? html`<a href="/dashboard/usage?range=${r}" aria-current="page">${RANGES[r]}</a>`
        : html`<a href="/dashboard/usage?range=${r}">${RANGES[r]}</a>`
    )
  }</nav>
<section class="card">
<h2>Расходы по ${range === "days" ? "дням" : "часам"}, USD (UTC)</h2>
${chartSvg(u, "charged", { chart: "usage-chart", point: "chart-point" })}
</section>
<section class="card">
<h2>Токены по ${range === "days" ? "дням" : "часам"} (вход и выход)</h2>
${chartSvg(u, "tokens", { chart: "tokens-chart", point: "tokens-point" })}
</section>
${seriesTable(u)}`;
  const csrf = await csrfToken(ctx.session.id);
  return page(
    ctx,
    200,
    layout("Расходы", body, { section: "usage", hint: ctx.session.account.rec.hint, csrf }),
  );
}

function row(name: Html, s: Sums): Html {
  return html`<tr>${name}<td class="num">${s.requests}</td><td class="num">${s.inputTokens}</td><td class="num">${s.cachedInputTokens}</td><td class="num">${s.outputTokens}</td><td class="num">${
    tokensOf(s)
  }</td><td class="num">$${formatUsd(s.charged)}</td></tr>`;
}

/** The range's numbers per family/model (the same sums the charts draw), with the total. */
function seriesTable(u: UsageBuckets): Html {
  const rows = [...u.totals].map(([name, s]) => {
    const [family, model] = [name.slice(0, name.indexOf("/")), name.slice(name.indexOf("/") + 1)];
    return row(
      html`
        <td>${family}</td>
        <td>${model}</td>
      `,
      s,
    );
  });
  return html`
    <section class="card">
      <h2>По семействам и моделям за ${RANGES[u.range]}</h2>
      <table class="data" data-testid="usage-table">
        <thead>
          <tr>
            <th>Семейство</th>
            <th>Модель</th>
            <th>Запросы</th>
            <th>Вход</th>
            <th>Из кэша</th>
            <th>Выход</th>
            <th>Токенов</th>
            <th>Списано</th>
          </tr>
        </thead>
        <tbody>${rows.length === 0
          ? html`
            <tr>
              <td colspan="8" class="muted">Запросов за период не было.</td>
            </tr>
          `
          : rows}</tbody>
        <tfoot>${row(html`<th colspan="2">Итого</th>`, u.total)}</tfoot>
      </table>
    </section>
  `;
}
