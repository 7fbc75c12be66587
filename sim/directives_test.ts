import assert from "node:assert/strict";
import { midFault, scanDirectives, statusFault } from "./directives.ts";

Deno.test("directives: none", () => {
  const { directives, clean } = scanDirectives("просто текст");
  assert.equal(clean, "просто текст");
  assert.deepEqual(directives.faults, []);
  assert.equal(directives.words, undefined);
  assert.equal(directives.tool, false);
});

Deno.test("directives: several, anywhere, removed from the text", () => {
  const { directives: d, clean } = scanDirectives(
    "[[sim:words=5]]Привет [[sim:tool]] мир[[sim:reasoning]] [[sim:cached=10]][[sim:search=2]]" +
      "[[sim:delay=30]][[sim:interval=7]][[sim:fault=status:429]][[sim:fault=stall]]",
  );
  assert.equal(clean, "Привет  мир ");
  assert.equal(d.words, 5);
  assert.equal(d.tool, true);
  assert.equal(d.reasoning, 8);
  assert.equal(d.cached, 10);
  assert.equal(d.search, 2);
  assert.equal(d.delay, 30);
  assert.equal(d.interval, 7);
  assert.equal(statusFault(d), 429);
  assert.equal(midFault(d), "stall");
});

Deno.test("directives: bad values and unknown names are ignored; words capped", () => {
  const { directives: d } = scanDirectives(
    "[[sim:words=abc]] [[sim:bogus=1]] [[sim:fault=status:200]] [[sim:fault=nope]] [[sim:reasoning=3]]",
  );
  assert.equal(d.words, undefined);
  assert.equal(d.reasoning, 3);
  assert.deepEqual(d.faults, []);
  assert.equal(scanDirectives("[[sim:words=99999999]]").directives.words, 100_000);
});

Deno.test("directives: unterminated marker is left alone", () => {
  const { directives: d, clean } = scanDirectives("a [[sim:words=3");
  assert.equal(d.words, undefined);
  assert.equal(clean, "a [[sim:words=3");
});

Deno.test("directives: url_citation and prompt_tokens", () => {
  const { directives: d } = scanDirectives("[[sim:url_citation]] [[sim:prompt_tokens=256001]]");
  assert.equal(d.urlCitation, true);
  assert.equal(d.promptTokens, 256_001);
  const none = scanDirectives("[[sim:prompt_tokens=x]] [[sim:prompt_tokens=-1]]").directives;
  assert.equal(none.urlCitation, false);
  assert.equal(none.promptTokens, undefined);
});

Deno.test("directives: server-tool directives", () => {
  const { directives: d } = scanDirectives(
    "[[sim:fetch=2]] [[sim:search_error=too_many_requests]] [[sim:fetch_error=url_too_long]] [[sim:search_empty]]" +
      "[[sim:cite_split]] [[sim:force_server_tools]]",
  );
  assert.equal(d.fetch, 2);
  assert.deepEqual(d.searchError, { code: "too_many_requests", billed: false });
  assert.equal(d.fetchError, "url_too_long");
  assert.equal(d.searchEmpty, true);
  assert.equal(d.citeSplit, true);
  assert.equal(d.forceServerTools, true);
  assert.deepEqual(scanDirectives("[[sim:search_error=unavailable:billed]]").directives.searchError, {
    code: "unavailable",
    billed: true,
  });
  const bad = scanDirectives(
    "[[sim:search_error=nope]] [[sim:search_error=unavailable:x]] [[sim:fetch_error=x]]",
  );
  assert.equal(bad.directives.searchError, undefined);
  assert.equal(bad.directives.fetchError, undefined);
});
