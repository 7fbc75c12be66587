/**
 * Query parameters of the usage report (spec §4.8): `mode` → 410 product_modes_removed; anything else
 * unknown, repeated or malformed → 422 validation_error with the parameter name in `param`.
 */
import { FAMILIES, type Family } from "../catalog/models.ts";
import { GatewayError } from "../errors/gateway_error.ts";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const DAY_MS = 86_400_000;

export type ReportKind = "summary" | "requests";

/** Row filters; also what a page cursor is bound to. */
export interface UsageFilters {
  family: Family | null;
  endpoint: string | null;
  /** UTC dates YYYY-MM-DD, inclusive. */
  start: string | null;
  end: string | null;
}

export interface UsageQuery {
  filters: UsageFilters;
  /** createdAt bounds in ms: from inclusive, to exclusive (end of the `end` day). */
  fromMs: number | null;
  toMs: number | null;
  limit: number;
  cursor: string | null;
}

const COMMON = ["family", "endpoint", "start", "end"];
const ALLOWED: Record<ReportKind, ReadonlySet<string>> = {
  summary: new Set(COMMON),
  requests: new Set([...COMMON, "limit", "cursor"]),
};

const invalid = (param: string, detail: string) =>
  new GatewayError("validation_error", { param: param === "" ? null : param, detail });

export function parseUsageQuery(params: URLSearchParams, kind: ReportKind): UsageQuery {
  if (params.has("mode")) throw new GatewayError("product_modes_removed", { param: "mode" });
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!ALLOWED[kind].has(name)) throw invalid(name, "Неизвестный параметр.");
    if (seen.has(name)) throw invalid(name, "Параметр передан несколько раз.");
    seen.add(name);
  }
  const family = params.get("family");
  if (family !== null && !(FAMILIES as readonly string[]).includes(family)) {
    throw invalid("family", `Допустимые семейства: ${FAMILIES.join(", ")}.`);
  }
  const endpoint = params.get("endpoint");
  if (endpoint !== null && !/^\/[A-Za-z0-9._~\/-]{1,199}$/.test(endpoint)) {
    throw invalid("endpoint", "Укажите путь эндпоинта, например /v1/chat/completions.");
  }
  const start = params.get("start");
  const end = params.get("end");
  const fromMs = start === null ? null : parseDate("start", start);
  const endMs = end === null ? null : parseDate("end", end);
  if (fromMs !== null && endMs !== null && fromMs > endMs) {
    throw invalid("end", "Дата end раньше даты start.");
  }
  return {
    filters: {
      family: family as Family | null,
      endpoint,
      start,
      end,
    },
    fromMs,
    toMs: endMs === null ? null : endMs + DAY_MS,
    limit: parseLimit(params.get("limit")),
    cursor: params.get("cursor"),
  };
}

/** Midnight UTC of a real calendar date YYYY-MM-DD, in ms. */
function parseDate(param: string, text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m) {
    const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (new Date(ms).toISOString().slice(0, 10) === text) return ms;
  }
  throw invalid(param, "Ожидается дата UTC в виде YYYY-MM-DD.");
}

function parseLimit(text: string | null): number {
  if (text === null) return DEFAULT_LIMIT;
  const n = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) throw invalid("limit", `Ожидается целое число от 1 до ${MAX_LIMIT}.`);
  return n;
}

/** Canonical text of the filters, for binding a cursor to them. */
export function filtersKey(f: UsageFilters): string {
  return JSON.stringify([f.family, f.endpoint, f.start, f.end]);
}
