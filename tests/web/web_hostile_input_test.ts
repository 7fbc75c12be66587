/**
 * Hostile inputs of the alpha web tools (spec §8.3): IP forms the URL parser cannot parse are refused
 * destinations like every other, and a valid 16,384-byte search query never becomes a URL the backend refuses
 * (SearXNG gets it as a POST form, Brave's limit is refused honestly before any call).
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { post, withGateway } from "../support/harness.ts";
import { assertEnvelope } from "../support/raw_http.ts";

const enc = new TextEncoder();

Deno.test("IP forms the URL parser cannot parse are refused destinations like every other", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    for (
      const url of [
        "http://[fe80::1%25lo]/",
        "http://[fe80::1%lo]/",
        "https://[::1%25eth0]:443/x",
        "http://1.2.3.256/",
        "http://999.1.1.1/",
        "http://0x100000000/",
        "http://paypal.com.127.0.0.1/",
      ]
    ) {
      const res = await post(t.url + "/v1/alpha/fetch", key, { url });
      const body = await res.text();
      assertEnvelope(
        { status: res.status, headers: res.headers, body },
        400,
        "managed_service_destination_rejected",
        "openai",
        "url",
      );
    }
    // A URL that is not one at all stays a malformed request.
    for (const url of ["http://exa mple.com/", "http://[::1/", "http:///x"]) {
      const res = await post(t.url + "/v1/alpha/fetch", key, { url });
      const json = await res.json();
      assert.equal(res.status, 400, url);
      assert.equal(json.error.code, "invalid_managed_service_request", url);
    }
  }));

// ---------------------------------------------------------------------------------------------
// A valid 16,384-byte query never becomes a URL the backend refuses

Deno.test("SearXNG gets long queries as a POST form; Brave refuses queries past its limit honestly", async () => {
  // A SearXNG stand-in behind a front server with nginx's 8 KiB request-line buffer.
  const seen: { method: string; q: string | null; targetBytes: number }[] = [];
  const searx = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const u = new URL(req.url);
    const targetBytes = u.href.length - u.origin.length;
    if (targetBytes > 8192) return new Response("Request-URI Too Large", { status: 414 });
    const params = req.method === "POST" ? new URLSearchParams(await req.text()) : u.searchParams;
    seen.push({ method: req.method, q: params.get("q"), targetBytes });
    if (params.get("format") !== "json") return new Response("Forbidden", { status: 403 });
    return Response.json({ results: [{ url: "https://example.org/r", title: "R", content: "snippet" }] });
  });
  const braveSeen: string[] = [];
  const brave = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    braveSeen.push(new URL(req.url).searchParams.get("q") ?? "");
    return Response.json({ web: { results: [{ url: "https://brave.example.org/a", title: "A" }] } });
  });
  try {
    const longQueries = ["😀".repeat(4096), "я".repeat(4096), "a b ".repeat(1024), "%&=+#?".repeat(682)];
    for (const q of longQueries) assert.ok(enc.encode(q).length <= 16_384 && [...q].length <= 4096);
    await withGateway(async (t) => {
      const { key } = await t.newKey("1.00");
      for (const q of ["кот", ...longQueries]) {
        const res = await post(t.url + "/v1/alpha/search", key, { query: q });
        const json = await res.json();
        assert.equal(res.status, 200, `${q.length}: ${JSON.stringify(json).slice(0, 300)}`);
        assert.deepEqual(json.data, [{ url: "https://example.org/r", title: "R", snippet: "snippet" }]);
        const last = seen.at(-1)!;
        assert.equal(last.q, q, "the query arrives exactly as sent");
        assert.equal(last.method, q === "кот" ? "GET" : "POST");
        assert.ok(last.targetBytes <= 2048);
      }
    }, { SEARCH_UPSTREAM_URL: `http://127.0.0.1:${(searx.addr as Deno.NetAddr).port}` });

    await withGateway(async (t) => {
      const { key } = await t.newKey("1.00");
      const tooLong: [string, string][] = [
        ["401 characters", "a".repeat(401)],
        ["4096 emoji", "😀".repeat(4096)],
        ["51 words", Array.from({ length: 51 }, (_, i) => `w${i}`).join(" ")],
      ];
      for (const [name, q] of tooLong) {
        const res = await post(t.url + "/v1/alpha/search", key, { query: q });
        const body = await res.text();
        assertEnvelope(
          { status: res.status, headers: res.headers, body },
          400,
          "search_query_too_long",
          "openai",
          "query",
        );
        assert.match(JSON.parse(body).error.message, /400 символов и 50 слов/, name);
      }
      assert.deepEqual(braveSeen, [], "refused before any call to Brave");
      for (const q of ["b".repeat(400), Array.from({ length: 50 }, (_, i) => `w${i}`).join(" ")]) {
        const res = await post(t.url + "/v1/alpha/search", key, { query: q });
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
      assert.equal(braveSeen.length, 2);
    }, {
      SEARCH_UPSTREAM_URL: `http://127.0.0.1:${(brave.addr as Deno.NetAddr).port}`,
      SEARCH_UPSTREAM_KEY: "brave-key",
      SEARCH_BACKEND: "brave",
    });

    // The built-in simulator (demo mode's SearXNG) takes the POST form too.
    const sim = await startSimulator();
    try {
      await withGateway(async (t) => {
        const { key } = await t.newKey("1.00");
        const res = await post(t.url + "/v1/alpha/search", key, { query: "😀".repeat(4096) });
        assert.equal(res.status, 200);
        assert.equal((await res.json()).object, "list");
      }, { SEARCH_UPSTREAM_URL: sim.url });
    } finally {
      await sim.close();
    }
  } finally {
    await searx.shutdown();
    await brave.shutdown();
  }
});
