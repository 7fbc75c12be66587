import assert from "node:assert/strict";
import { SEARCH_RESULT_COUNT } from "./search.ts";
import { withSim } from "./test_util.ts";

Deno.test("sim search: SearXNG JSON shape with deliberate unusable results", () =>
  withSim(async (sim) => {
    const res = await fetch(`${sim.url}/search?q=${encodeURIComponent("кот")}&format=json`);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.query, "кот");
    assert.equal(body.results.length, SEARCH_RESULT_COUNT);
    assert.equal(body.results[0].url, "https://example.com/sim/0?q=%D0%BA%D0%BE%D1%82");
    assert.equal(body.results[0].title, "Результат 0: кот");
    assert.equal(body.results[1].url, "javascript:alert(1)");
    assert.equal("url" in body.results[3], false);
    assert.equal(body.results[7].title.length, 600);
    assert.deepEqual(body.answers, []);
    assert.equal(sim.requests.at(-1)!.path, "/search");
  }));

Deno.test("sim search: format other than json is 403; magic queries", () =>
  withSim(async (sim) => {
    const html = await fetch(`${sim.url}/search?q=x`);
    assert.equal(html.status, 403);
    await html.body?.cancel();
    const err = await fetch(`${sim.url}/search?q=sim:status=502&format=json`);
    assert.equal(err.status, 502);
    await err.body?.cancel();
    const garbage = await fetch(`${sim.url}/search?q=sim:garbage&format=json`);
    assert.equal((await garbage.text()).startsWith("<html>"), true);
    const empty = await (await fetch(`${sim.url}/search?q=sim:empty&format=json`)).json();
    assert.deepEqual(empty.results, []);
  }));
