import assert from "node:assert/strict";
import { findModel } from "../../catalog/models.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import { betaPolicy } from "./policy.ts";
import { checkServerTools, MAX_DOMAINS, searchUsesOf } from "./server_tools.ts";

type Obj = Record<string, unknown>;
const SEARCH: Obj = { type: "web_search_20250305", name: "web_search", max_uses: 3 };
const FETCH: Obj = { type: "web_fetch_20250910", name: "web_fetch", max_uses: 2, max_content_tokens: 5000 };
const CLIENT: Obj = { name: "get_weather", input_schema: { type: "object" } };

/** The tool with these fields changed; `undefined` removes a field. */
function w(base: Obj, changes: Obj): Obj {
  const out: Obj = { ...base, ...changes };
  for (const [k, v] of Object.entries(changes)) if (v === undefined) delete out[k];
  return out;
}
const domains = (n: number) => Array.from({ length: n }, (_, i) => `d${i}.example.com`);
const U = "unsupported_parameter";
const I = "invalid_parameter";

/** [what, tools, expected refusal [code, param] or null = accepted]. */
type Row = [string, unknown, [string, string] | null];

const ACCEPTED: Row[] = [
  ["no tools field", undefined, null],
  ["tools not a list (the decoder's business)", "x", null],
  ["non-object entry (the decoder's business)", [5], null],
  ["client tool", [CLIENT], null],
  ["custom client tool", [{ ...CLIENT, type: "custom" }], null],
  ["another non-server type (the decoder's business)", [{ type: "computer", name: "c" }], null],
  ["type that only looks versioned (7 digits, decoder)", [{ type: "web_search_2025030" }], null],
  ["web search, required fields only", [SEARCH], null],
  ["web fetch, required fields only", [FETCH], null],
  ["both tools, with client tools around", [CLIENT, SEARCH, FETCH, { ...CLIENT, name: "b" }], null],
  ["search max_uses 1", [w(SEARCH, { max_uses: 1 })], null],
  ["search max_uses 5", [w(SEARCH, { max_uses: 5 })], null],
  ["fetch max_uses 1", [w(FETCH, { max_uses: 1 })], null],
  ["fetch max_uses 3", [w(FETCH, { max_uses: 3 })], null],
  ["max_content_tokens 1", [w(FETCH, { max_content_tokens: 1 })], null],
  ["max_content_tokens 25000", [w(FETCH, { max_content_tokens: 25_000 })], null],
  ["search max_uses 3.0 (an integer in JSON)", [w(SEARCH, { max_uses: 3.0 })], null],
  ["allowed_domains, 1 entry", [w(SEARCH, { allowed_domains: ["example.com"] })], null],
  ["allowed_domains, 100 entries", [w(SEARCH, { allowed_domains: domains(MAX_DOMAINS) })], null],
  ["blocked_domains, 100 entries on fetch", [w(FETCH, { blocked_domains: domains(MAX_DOMAINS) })], null],
  ["allowed_callers [direct]", [
    w(SEARCH, { allowed_callers: ["direct"] }),
    w(FETCH, { allowed_callers: ["direct"] }),
  ], null],
  ["citations enabled true", [w(FETCH, { citations: { enabled: true } })], null],
  ["citations enabled false", [w(FETCH, { citations: { enabled: false } })], null],
  ["null optional fields count as not sent", [
    w(SEARCH, { allowed_domains: null, blocked_domains: ["a.com"], allowed_callers: null }),
    w(FETCH, { citations: null, allowed_domains: ["a.com"], blocked_domains: null }),
  ], null],
  ["every field of both tools", [
    w(SEARCH, { allowed_domains: ["example.com", "docs.example.com/api/*"], allowed_callers: ["direct"] }),
    w(FETCH, {
      blocked_domains: ["ads.example.com"],
      allowed_callers: ["direct"],
      citations: { enabled: true },
    }),
  ], null],
  ["search domain forms", [w(SEARCH, {
    allowed_domains: [
      "example.com",
      "sub.example.co.uk",
      "Example.COM",
      "xn--e1afmkfd.xn--p1ai",
      "a-b.example.com",
      "localhost",
      "1.example.com",
      "example.com/docs",
      "example.com/docs/*",
      "example.com/docs/api/*",
      "example.com/a%20b/v1.2/~x/*",
    ],
  })], null],
];

const badEntry = (entry: unknown, tool = SEARCH, field = "allowed_domains"): Row => [
  `${tool === SEARCH ? "search" : "fetch"} ${field} entry ${JSON.stringify(entry)}`,
  [w(tool, { [field]: ["ok.example.com", entry] })],
  [I, `tools.0.${field}.1`],
];

const REFUSED: Row[] = [
  // Other tool variants and versions (rule 2).
  ["web_search, unknown version", [w(SEARCH, { type: "web_search_20260101" })], [U, "tools.0.type"]],
  ["web_fetch, unknown version", [w(FETCH, { type: "web_fetch_20250305" })], [U, "tools.0.type"]],
  ["code_execution", [{ type: "code_execution_20250522", name: "code_execution" }], [U, "tools.0.type"]],
  ["bash", [CLIENT, { type: "bash_20250124", name: "bash" }], [U, "tools.1.type"]],
  ["text_editor", [{ type: "text_editor_20250728", name: "str_replace_based_edit_tool" }], [
    U,
    "tools.0.type",
  ]],
  // At most one of each type (rule 1).
  ["two web searches", [SEARCH, FETCH, SEARCH], [I, "tools.2.type"]],
  ["two web fetches", [FETCH, w(FETCH, { max_uses: 1 })], [I, "tools.1.type"]],
  // Unknown fields (rule 2), refused whatever their value and before any bad value.
  ["search user_location", [w(SEARCH, { user_location: { type: "approximate", city: "Москва" } })], [
    U,
    "tools.0.user_location",
  ]],
  ["search user_location null", [w(SEARCH, { user_location: null })], [U, "tools.0.user_location"]],
  ["fetch cache_control", [SEARCH, w(FETCH, { cache_control: { type: "ephemeral" } })], [
    U,
    "tools.1.cache_control",
  ]],
  ["search cache_control", [w(SEARCH, { cache_control: { type: "ephemeral" } })], [
    U,
    "tools.0.cache_control",
  ]],
  ["search max_content_tokens (fetch only)", [w(SEARCH, { max_content_tokens: 100 })], [
    U,
    "tools.0.max_content_tokens",
  ]],
  ["search citations (fetch only)", [w(SEARCH, { citations: { enabled: true } })], [U, "tools.0.citations"]],
  ["fetch description", [w(FETCH, { description: "x" })], [U, "tools.0.description"]],
  ["unknown field before a bad value", [w(SEARCH, { max_uses: 9, search_profile: "x" })], [
    U,
    "tools.0.search_profile",
  ]],
  // name.
  ["search without name", [w(SEARCH, { name: undefined })], [I, "tools.0.name"]],
  ["search named web_fetch", [w(SEARCH, { name: "web_fetch" })], [I, "tools.0.name"]],
  ["fetch named Web_Fetch", [w(FETCH, { name: "Web_Fetch" })], [I, "tools.0.name"]],
  // max_uses and max_content_tokens (§8.4).
  ["search without max_uses", [w(SEARCH, { max_uses: undefined })], [I, "tools.0.max_uses"]],
  ["search max_uses null", [w(SEARCH, { max_uses: null })], [I, "tools.0.max_uses"]],
  ["search max_uses 0", [w(SEARCH, { max_uses: 0 })], [I, "tools.0.max_uses"]],
  ["search max_uses 6", [w(SEARCH, { max_uses: 6 })], [I, "tools.0.max_uses"]],
  ["search max_uses 8 (Claude Code's default)", [w(SEARCH, { max_uses: 8 })], [I, "tools.0.max_uses"]],
  ["search max_uses -1", [w(SEARCH, { max_uses: -1 })], [I, "tools.0.max_uses"]],
  ["search max_uses 2.5", [w(SEARCH, { max_uses: 2.5 })], [I, "tools.0.max_uses"]],
  ['search max_uses "3"', [w(SEARCH, { max_uses: "3" })], [I, "tools.0.max_uses"]],
  ["search max_uses true", [w(SEARCH, { max_uses: true })], [I, "tools.0.max_uses"]],
  ["fetch without max_uses", [SEARCH, w(FETCH, { max_uses: undefined })], [I, "tools.1.max_uses"]],
  ["fetch max_uses 0", [w(FETCH, { max_uses: 0 })], [I, "tools.0.max_uses"]],
  ["fetch max_uses 4", [SEARCH, w(FETCH, { max_uses: 4 })], [I, "tools.1.max_uses"]],
  ["fetch without max_content_tokens", [w(FETCH, { max_content_tokens: undefined })], [
    I,
    "tools.0.max_content_tokens",
  ]],
  ["max_content_tokens 0", [w(FETCH, { max_content_tokens: 0 })], [I, "tools.0.max_content_tokens"]],
  ["max_content_tokens 25001", [w(FETCH, { max_content_tokens: 25_001 })], [I, "tools.0.max_content_tokens"]],
  ["max_content_tokens 100.5", [w(FETCH, { max_content_tokens: 100.5 })], [I, "tools.0.max_content_tokens"]],
  // allowed_domains xor blocked_domains.
  ["search with both lists", [w(SEARCH, { allowed_domains: ["a.com"], blocked_domains: ["b.com"] })], [
    I,
    "tools.0.blocked_domains",
  ]],
  ["fetch with both lists", [w(FETCH, { blocked_domains: ["b.com"], allowed_domains: ["a.com"] })], [
    I,
    "tools.0.blocked_domains",
  ]],
  // The lists themselves (rule 4, §8.4).
  ["allowed_domains a string", [w(SEARCH, { allowed_domains: "example.com" })], [
    I,
    "tools.0.allowed_domains",
  ]],
  ["allowed_domains empty", [w(SEARCH, { allowed_domains: [] })], [I, "tools.0.allowed_domains"]],
  ["blocked_domains empty on fetch", [w(FETCH, { blocked_domains: [] })], [I, "tools.0.blocked_domains"]],
  ["allowed_domains 101 entries", [w(SEARCH, { allowed_domains: domains(MAX_DOMAINS + 1) })], [
    I,
    "tools.0.allowed_domains",
  ]],
  ["blocked_domains 101 entries on fetch", [w(FETCH, { blocked_domains: domains(MAX_DOMAINS + 1) })], [
    I,
    "tools.0.blocked_domains",
  ]],
  // Entries (rules 4 and 5).
  ...[
    42,
    null,
    ["example.com"],
    "",
    "https://example.com",
    "http://example.com/docs/*",
    "//example.com",
    "1.2.3.4",
    "127.1",
    "0x7f000001",
    "[::1]",
    "::1",
    "fe80::1",
    "example.com:443",
    "example.com?q=1",
    "example.com/docs?x",
    "example.com#top",
    "example.com\\docs",
    "*.example.com",
    "exa*mple.com",
    "*",
    " example.com",
    "example.com ",
    "exa mple.com",
    "example.com\t",
    "пример.рф",
    "example..com",
    ".example.com",
    "example.com.",
    "-example.com",
    "example-.com",
    "under_score.com",
    `${"a".repeat(64)}.com`,
    "example.com/*",
    "example.com/",
    "example.com//docs",
    "example.com/docs/",
    "example.com/docs*",
    "example.com/*/docs",
    "example.com/docs/*/*",
    "example.com/../x",
    "example.com/a%2",
  ].map((e) => badEntry(e)),
  badEntry("a.com/x y", SEARCH, "blocked_domains"),
  badEntry("example.com/docs", FETCH),
  badEntry("example.com/docs/*", FETCH, "blocked_domains"),
  badEntry("example.com/", FETCH),
  badEntry("https://example.com", FETCH),
  badEntry("10.0.0.1", FETCH, "blocked_domains"),
  // allowed_callers (rule 3).
  ["allowed_callers empty", [w(SEARCH, { allowed_callers: [] })], [I, "tools.0.allowed_callers"]],
  ["allowed_callers with another caller", [
    w(SEARCH, { allowed_callers: ["direct", "code_execution_20250825"] }),
  ], [
    I,
    "tools.0.allowed_callers",
  ]],
  ["allowed_callers another caller", [w(FETCH, { allowed_callers: ["code_execution_20250825"] })], [
    I,
    "tools.0.allowed_callers",
  ]],
  ["allowed_callers a string", [w(FETCH, { allowed_callers: "direct" })], [I, "tools.0.allowed_callers"]],
  // citations (rule 6).
  ["citations true", [w(FETCH, { citations: true })], [I, "tools.0.citations"]],
  ["citations a list", [w(FETCH, { citations: [] })], [I, "tools.0.citations"]],
  ["citations without enabled", [w(FETCH, { citations: {} })], [I, "tools.0.citations.enabled"]],
  ["citations enabled a string", [w(FETCH, { citations: { enabled: "true" } })], [
    I,
    "tools.0.citations.enabled",
  ]],
  ["citations enabled null", [w(FETCH, { citations: { enabled: null } })], [I, "tools.0.citations.enabled"]],
  ["citations with another field", [w(FETCH, { citations: { enabled: true, max: 1 } })], [
    U,
    "tools.0.citations.max",
  ]],
];

function outcome(tools: unknown): [string, string] | null {
  const body: Obj = tools === undefined ? { model: "beta-opus-5" } : { model: "beta-opus-5", tools };
  try {
    checkServerTools(body);
    return null;
  } catch (e) {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, 400);
    assert.match(e.detail ?? "", /[а-яё]/i, `${e.code} ${e.param}: a Russian detail`);
    return [e.code, e.param ?? ""];
  }
}

Deno.test("beta server tools: accepted forms", () => {
  for (const [what, tools] of ACCEPTED) assert.deepEqual(outcome(tools), null, what);
});

Deno.test("beta server tools: one refusal per rule and boundary, with its code and param", () => {
  for (const [what, tools, expected] of REFUSED) assert.deepEqual(outcome(tools), expected, what);
});

Deno.test("beta server tools: the detail says what is wrong and what is accepted", () => {
  const detail = (tools: unknown) => {
    try {
      checkServerTools({ tools });
    } catch (e) {
      return (e as GatewayError).detail ?? "";
    }
    assert.fail("accepted");
  };
  assert.match(detail([w(SEARCH, { max_uses: 6 })]), /max_uses = 6 .*от 1 до 5/);
  assert.match(detail([w(FETCH, { max_content_tokens: 25_001 })]), /от 1 до 25 000/);
  assert.match(detail([w(SEARCH, { type: "web_search_20260101" })]), /только web_search_20250305/);
  assert.match(detail([{ type: "bash_20250124" }]), /web_search_20250305 и web_fetch_20250910/);
  assert.match(
    detail([w(SEARCH, { user_location: {} })]),
    /user_location.*допустимые поля: type, name, max_uses/,
  );
  assert.match(
    detail([w(FETCH, { allowed_domains: ["a.com/x"] })]),
    /путь после домена у web_fetch недопустим.*только домен без пути/,
  );
  assert.match(detail([w(SEARCH, { allowed_domains: ["https://a.com"] })]), /схема.*example\.com\/docs\/\*/);
  assert.match(detail([w(SEARCH, { allowed_domains: domains(101) })]), /101 .*не более 100/);
});

Deno.test("beta server tools: searchUsesOf is the web search max_uses, 0 without one", () => {
  assert.equal(searchUsesOf({}), 0);
  assert.equal(searchUsesOf({ tools: "x" }), 0);
  assert.equal(searchUsesOf({ tools: [CLIENT, FETCH] }), 0);
  assert.equal(searchUsesOf({ tools: [CLIENT, FETCH, w(SEARCH, { max_uses: 4 })] }), 4);
  assert.equal(searchUsesOf({ tools: [w(SEARCH, { max_uses: 5 })] }), 5);
});

Deno.test("beta policy: rawBody checks server tools on Messages only and returns the same object", () => {
  const model = findModel("beta-opus-5")!;
  const ok = { model: model.id, messages: [], tools: [SEARCH, FETCH] };
  assert.equal(betaPolicy().rawBody(model, "anthropic", ok), ok);
  const bad = { model: model.id, messages: [], tools: [w(SEARCH, { max_uses: 6 })] };
  assert.throws(() => betaPolicy().rawBody(model, "anthropic", bad), GatewayError);
  assert.equal(betaPolicy().rawBody(model, "openai_chat", bad), bad);
  assert.equal(betaPolicy().rawBody(model, "openai_responses", bad), bad);
});
