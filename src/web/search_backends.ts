/**
 * Search backends behind SEARCH_UPSTREAM_URL (spec §4.4), chosen by SEARCH_BACKEND:
 * - `searxng`: the SearXNG JSON API, `GET {url}/search?q=…&format=json` (self-hostable; the JSON
 *   format must be enabled in its settings.yml). A request URL longer than SEARXNG_MAX_GET_URL goes
 *   as `POST {url}/search` with the same parameters form-encoded in the body (SearXNG's /search takes
 *   both): a 16 KiB query is ~48 KB once percent-encoded, more than front servers accept in a URL.
 *   SEARCH_UPSTREAM_KEY, when set, goes as `Authorization: Bearer` (for a SearXNG behind an
 *   authenticating proxy).
 * - `brave`: the Brave Search API, `GET {url}/res/v1/web/search?q=…&count=20` with the key in
 *   `X-Subscription-Token` (url e.g. https://api.search.brave.com). Brave documents `q` as at most
 *   400 characters and 50 words; a longer query is refused before the call (400
 *   `search_query_too_long`, param `query`) instead of becoming an upstream failure.
 * The operator's search URL is trusted configuration and is called with plain fetch (not through
 * the page-fetch guard). Each adapter maps raw results to RawResult; search_handler.ts filters them.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import { isObject } from "../util/json.ts";

export type SearchBackendName = "searxng" | "brave";

/** One upstream result before filtering; every field may be missing or of a wrong type. */
export interface RawResult {
  url?: unknown;
  title?: unknown;
  snippet?: unknown;
  date?: unknown;
  site_name?: unknown;
}

export interface SearchBackend {
  /** Throws 400 `search_query_too_long` for a query this backend cannot take (checked before the call). */
  checkQuery(query: string): void;
  search(query: string, signal: AbortSignal): Promise<RawResult[]>;
}

/** Longest SearXNG `GET` URL; above it the same parameters go as a form-encoded POST. */
export const SEARXNG_MAX_GET_URL = 2048;
/** Brave Search API web search: `q` is "maximum of 400 characters and 50 words" (its API reference). */
export const BRAVE_MAX_QUERY_CHARS = 400;
export const BRAVE_MAX_QUERY_WORDS = 50;

export const SEARCH_TIMEOUT_MS = 15_000;
/** Largest upstream search answer read, bytes. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

async function requestJson(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  form?: URLSearchParams,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: "application/json", ...headers },
      signal,
      redirect: "error",
      ...(form ? { method: "POST", body: form } : {}),
    });
  } catch {
    throw new GatewayError("upstream_unavailable", { detail: "Поисковый сервис недоступен." });
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new GatewayError(res.status === 429 ? "standard_capacity_saturated" : "upstream_unavailable", {
      detail: `Поисковый сервис ответил ${res.status}.`,
    });
  }
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw new GatewayError("upstream_invalid_response", { detail: "Ответ поиска слишком большой." });
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    throw new GatewayError("upstream_unavailable", { detail: "Поисковый сервис оборвал ответ." });
  }
  if (text.length > MAX_ANSWER_BYTES) {
    throw new GatewayError("upstream_invalid_response", { detail: "Ответ поиска слишком большой." });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError("upstream_invalid_response", { detail: "Поисковый сервис вернул не JSON." });
  }
}

export function searxngBackend(baseUrl: string, key?: string): SearchBackend {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    checkQuery() {},
    async search(query, signal) {
      const params = new URLSearchParams({ q: query, format: "json" });
      const get = `${base}/search?${params}`;
      const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      const body = get.length <= SEARXNG_MAX_GET_URL
        ? await requestJson(get, auth, signal)
        : await requestJson(`${base}/search`, auth, signal, params);
      if (!isObject(body) || !Array.isArray(body.results)) {
        throw new GatewayError("upstream_invalid_response", { detail: "Ответ SearXNG без results." });
      }
      return body.results.filter(isObject).map((r) => ({
        url: r.url,
        title: r.title,
        snippet: r.content,
        date: r.publishedDate ?? r.pubdate,
        site_name: r.site_name,
      }));
    },
  };
}

export function braveBackend(baseUrl: string, key?: string): SearchBackend {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    checkQuery(query) {
      const chars = [...query].length;
      const words = query.trim().split(/\s+/u).length;
      if (chars > BRAVE_MAX_QUERY_CHARS || words > BRAVE_MAX_QUERY_WORDS) {
        throw new GatewayError("search_query_too_long", {
          param: "query",
          detail:
            `Поиск Brave принимает не более ${BRAVE_MAX_QUERY_CHARS} символов и ${BRAVE_MAX_QUERY_WORDS} слов ` +
            `(в запросе ${chars} символов, ${words} слов).`,
        });
      }
    },
    async search(query, signal) {
      const url = `${base}/res/v1/web/search?${new URLSearchParams({ q: query, count: "20" })}`;
      const body = await requestJson(url, key ? { "x-subscription-token": key } : {}, signal);
      const web = isObject(body) ? body.web : undefined;
      if (!isObject(body) || (web !== undefined && !isObject(web))) {
        throw new GatewayError("upstream_invalid_response", { detail: "Ответ Brave Search некорректен." });
      }
      const results = isObject(web) && Array.isArray(web.results) ? web.results : [];
      return results.filter(isObject).map((r) => ({
        url: r.url,
        title: r.title,
        snippet: r.description,
        date: r.page_age ?? r.age,
        site_name: isObject(r.profile) ? r.profile.name : undefined,
      }));
    },
  };
}

export function makeBackend(name: SearchBackendName, baseUrl: string, key?: string): SearchBackend {
  return name === "brave" ? braveBackend(baseUrl, key) : searxngBackend(baseUrl, key);
}
