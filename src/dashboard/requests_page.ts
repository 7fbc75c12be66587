/**
 * GET /dashboard/requests: the key's usage rows, newest first, REQUESTS_PAGE_SIZE a page, filtered by family,
 * model, surface (the endpoint), status and stream from a GET form; each row with its reserve, charge, tokens
 * and the request id to quote to support. Rows are read by the usage report's scan (src/reports/report.ts);
 * the `next-page` link carries its signed cursor (src/reports/cursor.ts), bound to the key and the filters and
 * signed with a secret derived from the session, so a link works on every process on the store and dies with
 * the session. A page reads at most MAX_SCAN rows: a filter that keeps few rows of a long history ends the page
 * early rather than reading the whole history at once; and each page counts against the key's read rate of the
 * usage report (src/reports/rate_limit.ts: 429 usage_rate_limit), the same rows being read.
 */
import type { App } from "../app.ts";
import { FAMILIES, type Family, MODELS } from "../catalog/models.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { formatUsd } from "../money/usd.ts";
import { CursorSigner } from "../reports/cursor.ts";
import { admitRead } from "../reports/rate_limit.ts";
import { type RowFilters, usageRequestsPage } from "../reports/report.ts";
import type { SessionContext } from "../request/context.ts";
import type { UsageRow } from "../store/types.ts";
import { type Html, html } from "../util/html.ts";
import { csrfToken } from "./csrf.ts";
import { layout, utcTime } from "./layout.ts";
import { page, redirect } from "./respond.ts";

export const REQUESTS_PAGE_SIZE = 50;
export const MAX_SCAN = 5_000;

/** The endpoints that write usage rows: generation on the three surfaces, under /v1 and theta's /theta/v1. */
const SURFACES = ["/v1", "/theta/v1"].flatMap((base) =>
  ["/messages", "/chat/completions", "/responses"].map((p) => base + p)
);
const STATUSES: Record<UsageRow["status"], string> = { ok: "успешно", error: "ошибка", cancelled: "отменён" };
const PARAMS = new Set(["cursor", "family", "model", "surface", "status", "stream"]);

interface Filters {
  family: Family | null;
  model: string | null;
  surface: string | null;
  status: UsageRow["status"] | null;
  stream: boolean | null;
}

const invalid = (param: string, detail: string) => new GatewayError("validation_error", { param, detail });

/** The query: an empty value is no filter (what the form's "все" sends); anything else unknown is refused. */
function parseFilters(params: URLSearchParams): { filters: Filters; cursor: string | null } {
  for (const name of params.keys()) if (!PARAMS.has(name)) throw invalid(name, "Неизвестный параметр.");
  const get = (name: string) => params.get(name) || null;
  const family = get("family");
  if (family !== null && !(FAMILIES as readonly string[]).includes(family)) {
    throw invalid("family", `Допустимые семейства: ${FAMILIES.join(", ")}.`);
  }
  const model = get("model");
  if (model !== null && !/^[A-Za-z0-9._:-]{1,100}$/.test(model)) {
    throw invalid("model", "Некорректный id модели.");
  }
  const surface = get("surface");
  if (surface !== null && !SURFACES.includes(surface)) {
    throw invalid("surface", `Допустимо: ${SURFACES.join(", ")}.`);
  }
  const status = get("status");
  if (status !== null && !(status in STATUSES)) throw invalid("status", "Допустимо: ok, error, cancelled.");
  const stream = get("stream");
  if (stream !== null && stream !== "true" && stream !== "false") {
    throw invalid("stream", "Допустимо: true, false.");
  }
  return {
    filters: {
      family: family as Family | null,
      model,
      surface,
      status: status as UsageRow["status"] | null,
      stream: stream === null ? null : stream === "true",
    },
    cursor: get("cursor"),
  };
}

/** The page cursors' signer of a session: its secret derived one-way from the session id. */
async function signerOf(sessionId: string): Promise<CursorSigner> {
  const secret = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`gw-dashboard-cursor/v1\n${sessionId}`),
  );
  return new CursorSigner(new Uint8Array(secret));
}

/** The filters as query parameters (set ones only), for the next page's link. */
function query(f: Filters, cursor?: string): string {
  const q = new URLSearchParams();
  if (f.family) q.set("family", f.family);
  if (f.model) q.set("model", f.model);
  if (f.surface) q.set("surface", f.surface);
  if (f.status) q.set("status", f.status);
  if (f.stream !== null) q.set("stream", String(f.stream));
  if (cursor) q.set("cursor", cursor);
  return q.toString();
}

export async function requestsPage(app: App, ctx: SessionContext): Promise<Response> {
  if (!ctx.session) return redirect(ctx, "/dashboard");
  const keyId = ctx.session.account.rec.id;
  // A refused query reads no rows, so only a valid one counts against the read rate.
  const { filters, cursor } = parseFilters(ctx.url.searchParams);
  admitRead(app, keyId);
  const signer = await signerOf(ctx.session.id);
  const bound = JSON.stringify([
    filters.family,
    filters.model,
    filters.surface,
    filters.status,
    filters.stream,
  ]);
  const after = cursor === null ? null : (await signer.verify(cursor, keyId, bound)).after;
  await app.accounts.committer.flush();
  const rowFilters: RowFilters = { ...filters, endpoint: filters.surface };
  const q = { filters: rowFilters, fromMs: null, toMs: null, limit: REQUESTS_PAGE_SIZE };
  const found = await usageRequestsPage(app.store, keyId, q, after, MAX_SCAN);
  const next = found.after === null ? null : await signer.sign(keyId, bound, { after: found.after });
  const body = html`<h1>Запросы</h1>
${filterForm(filters)}
<section class="card wide">
<table class="data" data-testid="requests-table">
<thead><tr><th>Время</th><th>Модель (семейство)</th><th>Эндпоинт</th><th>Поток</th><th>Статус</th><th>Резерв</th><th>Списано</th><th title="вход / из кэша / выход">Токены</th><th>ID запроса</th></tr></thead>
<tbody>${
    found.rows.length === 0
      ? html`
        <tr>
          <td colspan="9" class="muted">Запросов${next === null ? "" : " на этой странице"} нет.</td>
        </tr>
      `
      : found.rows.map(requestRow)
  }</tbody>
</table>
${
    next !== null && found.rows.length < REQUESTS_PAGE_SIZE &&
    html`<p class="muted">Страница короче обычной: за один раз просматривается не больше ${MAX_SCAN} записей.</p>`
  }
<p class="pager">${cursor !== null && html`<a href="/dashboard/requests?${query(filters)}">К началу</a>`}${
    next !== null &&
    html`<a data-testid="next-page" href="/dashboard/requests?${query(filters, next)}">Следующая страница</a>`
  }</p>
</section>`;
  const csrf = await csrfToken(ctx.session.id);
  return page(
    ctx,
    200,
    layout("Запросы", body, { section: "requests", hint: ctx.session.account.rec.hint, csrf }),
  );
}

function requestRow(r: UsageRow): Html {
  const served = r.servedModel && r.servedModel !== r.model
    ? html`<br><span class="muted">ответила ${r.servedModel}</span>`
    : "";
  return html`
    <tr data-testid="request-row" data-request-id="${r.requestId}">
      <td>${utcTime(r.createdAt)}</td>
      <td>${r.model} <span class="muted">(${r.family})</span>${served}</td>
      <td><code>${r.endpoint}</code></td>
      <td>${r.stream ? "да" : "нет"}</td>
      <td class="status-${r.status}">${STATUSES[r.status]}</td>
      <td class="num">$${formatUsd(r.reserved)}</td>
      <td class="num">$${formatUsd(r.charged)}</td>
      <td class="num" title="вход / из кэша / выход">${r.inputTokens} / ${r.cachedInputTokens} / ${r
        .outputTokens}</td>
      <td><code>${r.requestId}</code></td>
    </tr>
  `;
}

function select(
  name: string,
  label: string,
  current: string | null,
  options: readonly [string, string][],
): Html {
  return html`<label>${label}
<select name="${name}">
<option value="">все</option>
${
    options.map(([v, text]) =>
      html`
        <option value="${v}" ${v === current
          ? html`
            selected
          `
          : ""}>${text}</option>
      `
    )
  }
</select>
</label>`;
}

function filterForm(f: Filters): Html {
  const models = MODELS.filter((m) => f.family === null || m.family === f.family).map((m) =>
    [m.id, m.id] as [
      string,
      string,
    ]
  );
  // A model the catalog no longer lists still filters (a link kept from before).
  if (f.model !== null && !models.some(([id]) => id === f.model)) models.push([f.model, f.model]);
  return html`<form method="get" action="/dashboard/requests" class="filters" data-autosubmit>
${select("family", "Семейство", f.family, FAMILIES.map((x) => [x, x]))}
${select("model", "Модель", f.model, models)}
${select("surface", "Эндпоинт", f.surface, SURFACES.map((x) => [x, x]))}
${select("status", "Статус", f.status, Object.entries(STATUSES))}
${select("stream", "Поток", f.stream === null ? null : String(f.stream), [["true", "да"], ["false", "нет"]])}
<button type="submit">Показать</button>
</form>`;
}
