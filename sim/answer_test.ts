import assert from "node:assert/strict";
import { buildPlan, countChars, type Inspect, promptTokensOf } from "./answer.ts";
import { scanDirectives } from "./directives.ts";
import { wordCount } from "./test_util.ts";

function inspect(text: string, extra: Partial<Inspect> = {}): Inspect {
  return {
    model: "m",
    stream: false,
    promptTokens: 10,
    turn: { text, toolResult: false },
    tools: { names: [], choice: "auto", webSearch: false },
    ...extra,
  };
}

function plan(text: string, extra: Partial<Inspect> = {}) {
  const { directives, clean } = scanDirectives(text);
  return buildPlan(inspect(text, extra), directives, clean);
}

Deno.test("answer: prompt tokens count string values only", () => {
  assert.equal(countChars({ role: "user", content: [{ type: "text", text: "abcd" }], n: 5 }), 12);
  assert.equal(promptTokensOf("abcde"), 2);
  assert.equal(promptTokensOf(undefined, []), 1);
});

Deno.test("answer: default 12 words, deterministic, Russian header", () => {
  const p = plan("Какая сегодня погода в Москве?");
  assert.equal(p.textTokens, 12);
  const text = p.text.slice(0, p.textTokens);
  assert.equal(wordCount(text), 12);
  assert.ok(text.startsWith("Ответ симулятора на «Какая сегодня погода в Москве?»:"));
  assert.equal(text, plan("Какая сегодня погода в Москве?").text.slice(0, 12));
  assert.equal(p.outputTokens, 12);
  assert.equal(p.truncated, false);
});

Deno.test("answer: budget truncates reasoning first, then text", () => {
  const p = plan("x [[sim:reasoning=5]] [[sim:words=10]]", { budget: 7 });
  assert.equal(p.reasoningTokens, 5);
  assert.equal(p.textTokens, 2);
  assert.equal(p.outputTokens, 7);
  assert.equal(p.truncated, true);
  const q = plan("x [[sim:reasoning=5]]", { budget: 3 });
  assert.equal(q.reasoningTokens, 3);
  assert.equal(q.textTokens, 0);
  assert.equal(q.truncated, true);
});

Deno.test("answer: loop_limit cuts like a budget below the request's, or with none", () => {
  const p = plan("x [[sim:reasoning=2]] [[sim:words=10]] [[sim:loop_limit=6]]");
  assert.equal(p.reasoningTokens, 2);
  assert.equal(p.textTokens, 4);
  assert.equal(p.outputTokens, 6);
  assert.equal(p.truncated, true);
  const under = plan("x [[sim:words=10]] [[sim:loop_limit=6]]", { budget: 100 });
  assert.equal(under.outputTokens, 6);
  assert.equal(under.truncated, true);
  const budgetFirst = plan("x [[sim:words=10]] [[sim:loop_limit=6]]", { budget: 4 });
  assert.equal(budgetFirst.outputTokens, 4, "the request's own smaller budget cuts first");
  const above = plan("x [[sim:words=10]] [[sim:loop_limit=20]]");
  assert.equal(above.outputTokens, 10);
  assert.equal(above.truncated, false, "a limit the answer does not reach changes nothing");
});

Deno.test("answer: tool choice rules", () => {
  const names = ["a", "b"];
  assert.equal(plan("q [[sim:tool]]").tool, null, "no tools offered");
  assert.equal(
    plan("q [[sim:tool]]", { tools: { names, choice: "auto", webSearch: false } }).tool?.name,
    "a",
  );
  assert.equal(plan("q", { tools: { names, choice: "auto", webSearch: false } }).tool, null);
  assert.equal(plan("q", { tools: { names, choice: "any", webSearch: false } }).tool?.name, "a");
  assert.equal(plan("q", { tools: { names, choice: "named", name: "b", webSearch: false } }).tool?.name, "b");
  assert.equal(plan("q [[sim:tool]]", { tools: { names, choice: "none", webSearch: false } }).tool, null);
  const t = plan("найди котиков [[sim:tool]]", { tools: { names, choice: "auto", webSearch: false } });
  assert.deepEqual(JSON.parse(t.tool!.fragments.join("")), { query: "найди котиков" });
  assert.equal(t.tool!.fragments.length, 3);
  assert.equal(t.outputTokens, 3);
});

Deno.test("answer: tool result turn and cached clamp", () => {
  const { directives, clean } = scanDirectives("18°C [[sim:cached=999]]");
  const p = buildPlan(inspect("18°C", { turn: { text: "18°C", toolResult: true } }), directives, clean);
  assert.ok(p.text.slice(0, p.textTokens).startsWith("Результат инструмента получен"));
  assert.equal(p.cached, 10);
});

Deno.test("answer: an image block counts a fixed size, not its base64 payload", () => {
  const img = { type: "image_url", image_url: { url: "data:image/png;base64," + "A".repeat(100_000) } };
  assert.equal(promptTokensOf([{ role: "user", content: [img] }]), 1_201);
});
