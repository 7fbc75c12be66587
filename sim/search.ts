/**
 * A SearXNG-shaped search endpoint: `GET /search?q=…&format=json` (the JSON API of a self-hosted
 * SearXNG). Deterministic: 25 results built from the query, among them deliberately unusable ones
 * (so the gateway's filtering is observable): #1 `javascript:` url, #3 no url, #5 `ftp:` url,
 * #11 a number as url, #7 an over-long title, #9 a snippet with HTML tags and entities; even results
 * carry `publishedDate`. Magic queries: `sim:status=<code>` answers that HTTP status,
 * `sim:garbage` answers 200 with a body that is not JSON, `sim:empty` answers no results.
 * `format` other than json → 403, as SearXNG does when the format is not enabled.
 * Like SearXNG, `POST /search` with the parameters form-encoded in the body is the same search; like
 * the front server of a real instance, a request target (path and query) over 8 KiB is refused with
 * 414 (nginx's default buffer for the request line).
 */

export const SEARCH_RESULT_COUNT = 25;

export function searchResults(query: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < SEARCH_RESULT_COUNT; i++) {
    const url = `https://example.com/sim/${i}?q=${encodeURIComponent(query)}`;
    const r: Record<string, unknown> = {
      url,
      title: `Результат ${i}: ${query}`,
      content: `Фрагмент ${i} по запросу «${query}».`,
      engine: "sim",
      engines: ["sim"],
      parsed_url: ["https", "example.com", `/sim/${i}`, "", `q=${encodeURIComponent(query)}`, ""],
      positions: [i + 1],
      score: 1 / (i + 1),
      category: "general",
      publishedDate: i % 2 === 0 ? `2025-01-${String((i % 28) + 1).padStart(2, "0")}T00:00:00` : null,
    };
    if (i === 1) r.url = "javascript:alert(1)";
    if (i === 3) delete r.url;
    if (i === 5) r.url = "ftp://files.example.com/x";
    if (i === 11) r.url = 42;
    if (i === 7) r.title = "Д".repeat(600);
    if (i === 9) r.content = "<b>жирный</b> &amp; <i>курсив</i>";
    out.push(r);
  }
  return out;
}

/** Longest request target (path + query) the simulated front server accepts. */
export const SEARCH_MAX_TARGET_BYTES = 8192;

export async function search(req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (url.href.length - url.origin.length > SEARCH_MAX_TARGET_BYTES) {
    await req.body?.cancel();
    return new Response("414 Request-URI Too Large", { status: 414 });
  }
  let params: URLSearchParams;
  if (req.method === "GET") params = url.searchParams;
  else if (req.method === "POST") params = new URLSearchParams(await req.text());
  else return new Response("method not allowed", { status: 405 });
  if (params.get("format") !== "json") return new Response("Forbidden", { status: 403 });
  const q = params.get("q") ?? "";
  const status = /^sim:status=(\d{3})$/.exec(q)?.[1];
  if (status) return Response.json({ error: "simulated" }, { status: Number(status) });
  if (q === "sim:garbage") return new Response("<html>not json</html>", { status: 200 });
  const results = q === "sim:empty" ? [] : searchResults(q);
  return Response.json({
    query: q,
    number_of_results: results.length,
    results,
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  });
}
