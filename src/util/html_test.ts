import assert from "node:assert/strict";
import { escapeHtml, Html, html } from "./html.ts";

Deno.test("html escapes every interpolated value, in content and in quoted attributes", () => {
  const evil = `<script>alert("x")</script>&'`;
  const out = html`<p title="${evil}">${evil}</p>`.text;
  assert.equal(
    out,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">' +
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>",
  );
  assert.ok(!out.includes("<script>"));
});

Deno.test("html nests fragments as they are, joins arrays, renders null, undefined and false as nothing", () => {
  const items = ["a<", "b"].map((x) => html`<li>${x}</li>`);
  assert.equal(html`<ul>${items}</ul>`.text, "<ul><li>a&lt;</li><li>b</li></ul>");
  assert.equal(html`${null}${undefined}${false}|${0}|${12n}|${true}`.text, "|0|12|true");
  assert.equal(String(html`<b>${"&"}</b>`), "<b>&amp;</b>");
});

Deno.test("Html cannot be made from raw text outside the template tag", () => {
  assert.throws(() => new Html("<script>", Symbol("html")), TypeError);
  assert.equal(escapeHtml("a&b"), "a&amp;b");
});
