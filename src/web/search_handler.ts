/** POST /v1/alpha/search (spec §2.4, §4.4, §8.3): free of charge, 402 at zero credit, no model, no stream. */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { jsonResponse } from "../request/json.ts";
import type { KeyContext } from "../request/context.ts";
import { makeBackend, type RawResult, SEARCH_TIMEOUT_MS, type SearchBackend } from "./search_backends.ts";
import { invalid, readSingleField } from "./strict_body.ts";

export const MAX_QUERY_CHARS = 4096;
export const MAX_QUERY_BYTES = 16_384;
export const MAX_RESULTS = 20;

/** Length bounds (characters, after cleaning) of the optional result fields; longer → field omitted. */
export const FIELD_BOUNDS = { title: 512, snippet: 2048, date: 64, site_name: 256 } as const;
export const MAX_RESULT_URL_CHARS = 2048;

export interface SearchResult {
  url: string;
  title?: string;
  snippet?: string;
  date?: string;
  site_name?: string;
}

/** Validates the query of spec §8.3; returns it as sent (not trimmed). */
export function checkQuery(query: string): string {
  if (query.trim() === "") throw invalid("query", "Запрос пуст.");
  // Characters are Unicode code points (an emoji is one character, not two UTF-16 units).
  let chars = 0;
  for (const _ of query) if (++chars > MAX_QUERY_CHARS) break;
  if (chars > MAX_QUERY_CHARS) throw invalid("query", `Запрос длиннее ${MAX_QUERY_CHARS} символов.`);
  if (new TextEncoder().encode(query).length > MAX_QUERY_BYTES) {
    throw invalid("query", `Запрос длиннее ${MAX_QUERY_BYTES} байт в UTF-8.`);
  }
  return query;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Plain text: tags stripped, common entities decoded, whitespace collapsed. */
export function cleanText(v: unknown): string | undefined {
  if (typeof v !== "string") return undefined;
  const text = v
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === "#") {
        const cp = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : "";
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    // deno-lint-ignore no-control-regex
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return text === "" ? undefined : text;
}

/** A usable result url: an absolute http(s) URL with a host, within the length bound. */
export function usableUrl(v: unknown): string | undefined {
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (s === "" || s.length > MAX_RESULT_URL_CHARS || /\s/.test(s)) return undefined;
  try {
    const u = new URL(s);
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "") return undefined;
    if (u.username !== "" || u.password !== "") return undefined;
    return s;
  } catch {
    return undefined;
  }
}

/** spec §2.4: url always; other fields only when present and within bounds; no usable url → dropped. */
export function filterResults(raw: RawResult[]): SearchResult[] {
  const out: SearchResult[] = [];
  for (const r of raw) {
    if (out.length >= MAX_RESULTS) break;
    const url = usableUrl(r.url);
    if (url === undefined) continue;
    const item: SearchResult = { url };
    for (const f of ["title", "snippet", "date", "site_name"] as const) {
      const v = cleanText(r[f]);
      if (v !== undefined && v.length <= FIELD_BOUNDS[f]) item[f] = v;
    }
    out.push(item);
  }
  return out;
}

/** The backend for this gateway: SEARCH_UPSTREAM_URL, or the built-in simulator in demo mode. */
export function backendFor(app: App): SearchBackend {
  const { SEARCH_UPSTREAM_URL, SEARCH_UPSTREAM_KEY, SEARCH_BACKEND } = app.config;
  if (SEARCH_UPSTREAM_URL) return makeBackend(SEARCH_BACKEND, SEARCH_UPSTREAM_URL, SEARCH_UPSTREAM_KEY);
  const sim = app.simulated ? app.upstreams.alpha?.baseUrl : undefined;
  if (sim) return makeBackend("searxng", sim);
  throw new GatewayError("service_unavailable", {
    detail: "Поиск не настроен на шлюзе (SEARCH_UPSTREAM_URL).",
  });
}

export async function searchHandler(app: App, ctx: KeyContext): Promise<Response> {
  if (app.accounts.available(ctx.account) <= 0n) throw new GatewayError("insufficient_credit");
  const query = checkQuery(await readSingleField(ctx.req, "query"));
  const backend = backendFor(app);
  backend.checkQuery(query);
  const signal = AbortSignal.timeout(SEARCH_TIMEOUT_MS);
  let raw: RawResult[];
  try {
    raw = await backend.search(query, signal);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError("upstream_unavailable", { detail: "Поисковый сервис недоступен." });
  }
  return jsonResponse(200, { object: "list", data: filterResults(raw) }, ctx.requestId, ctx.headers);
}
