/**
 * The live tariff as data: the wire shape of the admin API, its validation (zod, 400 invalid_request
 * with param), the replace-by-model change, and loading the stored table (seeded from TARIFF_SEED).
 */
import { z } from "zod";
import { findModel, MODELS } from "../catalog/models.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { formatUsd, parseUsd } from "../money/usd.ts";
import type { TariffStore } from "../store/store.ts";
import { Tariff } from "./tariff.ts";
import { TARIFF_SEED, type TariffRow } from "../catalog/tariff_seed.ts";

/** Rate rows one model may have (base + tiers); keeps the stored value far below the KV 64 KiB limit. */
export const MAX_ROWS_PER_MODEL = 8;

const perMillion = z.string().regex(
  /^\d{1,9}(\.\d{1,6})?$/,
  'USD per 1M tokens as a decimal string with at most 6 decimals, e.g. "3.00"',
);
const usd = z.string().regex(/^\d{1,9}(\.\d{1,12})?$/, 'decimal USD string, e.g. "0.01"');

export const wireRowSchema = z.object({
  model: z.string().refine((id) => findModel(id) !== undefined, "unknown model id (see GET /v1/models)"),
  input_usd_per_million: perMillion,
  output_usd_per_million: perMillion,
  cache_read_usd_per_million: perMillion.nullable().optional(),
  above_input_tokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullable().optional(),
  search: z.object({ usd, per: z.enum(["search", "request"]) }).strict().nullable().optional(),
  member_discount: z.boolean().optional(),
}).strict();

const bodySchema = z.object({ rows: z.array(wireRowSchema).min(1).max(200) }).strict();

export interface WireRow {
  model: string;
  input_usd_per_million: string;
  output_usd_per_million: string;
  cache_read_usd_per_million: string | null;
  above_input_tokens: number | null;
  search: { usd: string; per: "search" | "request" } | null;
  member_discount: boolean;
}

export interface TariffList {
  object: "list";
  data: WireRow[];
}

export const toWire = (r: TariffRow): WireRow => ({
  model: r.model,
  input_usd_per_million: r.input,
  output_usd_per_million: r.output,
  cache_read_usd_per_million: r.cacheRead ?? null,
  above_input_tokens: r.aboveInputTokens ?? null,
  search: r.search ? { usd: r.search.usd, per: r.search.per } : null,
  member_discount: r.memberDiscount === true,
});

export const tariffList = (rows: readonly TariffRow[]): TariffList => ({
  object: "list",
  data: rows.map(toWire),
});

/** Decimal strings are stored canonical: "3.5" → "3.50", "16" → "16.00". */
const canon = (usd: string) => formatUsd(parseUsd(usd));

function fromWire(w: z.infer<typeof wireRowSchema>): TariffRow {
  const row: TariffRow = {
    model: w.model,
    input: canon(w.input_usd_per_million),
    output: canon(w.output_usd_per_million),
  };
  if (w.cache_read_usd_per_million != null) row.cacheRead = canon(w.cache_read_usd_per_million);
  if (w.above_input_tokens != null) row.aboveInputTokens = w.above_input_tokens;
  if (w.search != null) row.search = { usd: canon(w.search.usd), per: w.search.per };
  if (w.member_discount === true) row.memberDiscount = true;
  return row;
}

const invalid = (param: string, detail: string) => new GatewayError("invalid_request", { param, detail });

function parse<T>(schema: z.ZodType<T>, value: unknown, prefix = ""): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw invalid(prefix + issue.path.join(".") || "rows", issue.message);
}

const MODEL_ORDER = new Map(MODELS.map((m, i) => [m.id, i]));

/** Catalog order, then the base row before its tiers (ascending threshold). */
function canonical(rows: TariffRow[]): TariffRow[] {
  const idx = (r: TariffRow) => MODEL_ORDER.get(r.model) ?? MODEL_ORDER.size;
  return rows.sort((a, b) => idx(a) - idx(b) || (a.aboveInputTokens ?? -1) - (b.aboveInputTokens ?? -1));
}

/** One model's rows: exactly one base row, distinct tier thresholds, a bounded count. */
function checkModelRows(model: string, rows: { row: TariffRow; param: string }[]): void {
  if (rows.length > MAX_ROWS_PER_MODEL) {
    throw invalid(rows[0]!.param + ".model", `у модели ${model} больше ${MAX_ROWS_PER_MODEL} строк тарифа`);
  }
  const seen = new Set<number>();
  for (const { row, param } of rows) {
    const above = row.aboveInputTokens ?? -1;
    if (seen.has(above)) {
      throw invalid(
        `${param}.above_input_tokens`,
        above < 0
          ? `у модели ${model} две базовые строки (above_input_tokens: null)`
          : `у модели ${model} две строки с above_input_tokens ${above}`,
      );
    }
    seen.add(above);
  }
  if (!seen.has(-1)) {
    throw invalid(
      `${rows[0]!.param}.above_input_tokens`,
      `у модели ${model} нет базовой строки (above_input_tokens: null)`,
    );
  }
}

function byModel(rows: { row: TariffRow; param: string }[]) {
  const groups = new Map<string, { row: TariffRow; param: string }[]>();
  for (const e of rows) groups.set(e.row.model, [...(groups.get(e.row.model) ?? []), e]);
  return groups;
}

/** Validates a whole table: every row well-formed, every catalog model priced by a base row. */
export function checkTable(rows: readonly TariffRow[]): void {
  const entries = rows.map((row, i) => {
    parse(wireRowSchema, toWire(row), `rows.${i}.`);
    return { row, param: `rows.${i}` };
  });
  const groups = byModel(entries);
  for (const [model, list] of groups) checkModelRows(model, list);
  for (const m of MODELS) {
    if (!groups.has(m.id)) throw invalid("rows", `у модели ${m.id} нет строк тарифа`);
  }
  try {
    new Tariff(rows);
  } catch (err) {
    throw invalid("rows", err instanceof Error ? err.message : String(err));
  }
}

/**
 * POST /admin/tariff: `{rows: [...]}` replaces every row of each model it names; other models keep
 * theirs. Returns the new full table (canonical order), validated; throws 400 invalid_request.
 */
export function applyTariffChange(current: readonly TariffRow[], body: unknown): TariffRow[] {
  const incoming = parse(bodySchema, body).rows.map(fromWire);
  const groups = byModel(incoming.map((row, i) => ({ row, param: `rows.${i}` })));
  for (const [model, list] of groups) checkModelRows(model, list);
  const next = canonical([
    ...current.filter((r) => !groups.has(r.model)).map((r) => structuredClone(r)),
    ...incoming,
  ]);
  checkTable(next);
  return next;
}

/**
 * The stored table made whole against the catalog: absent → the seed; rows of models no longer in
 * the catalog dropped; catalog models without rows get their seed rows. `changed`: worth storing.
 */
export function reconcileTariff(
  stored: readonly TariffRow[] | null,
): { rows: TariffRow[]; changed: boolean } {
  if (stored === null) return { rows: canonical(structuredClone([...TARIFF_SEED])), changed: true };
  const kept = stored.filter((r) => findModel(r.model) !== undefined);
  const priced = new Set(kept.map((r) => r.model));
  const added = TARIFF_SEED.filter((r) => !priced.has(r.model)).map((r) => structuredClone(r));
  return {
    rows: canonical([...kept, ...added]),
    changed: kept.length !== stored.length || added.length > 0,
  };
}

/** Start-up: the stored tariff (seeded and stored when absent), validated. */
export async function loadTariff(store: TariffStore): Promise<TariffRow[]> {
  const { rows, changed } = reconcileTariff(await store.getTariff());
  try {
    checkTable(rows);
  } catch (err) {
    const d = err instanceof GatewayError ? `${err.param}: ${err.detail}` : String(err);
    throw new Error(`the stored tariff is invalid (${d}); fix it with the admin API or CLI`);
  }
  if (changed) await store.putTariff(rows);
  return rows;
}
