import assert from "node:assert/strict";
import { CAP_FIELDS } from "./callback_data.ts";
import { parseAmount, parsePrompt, type Prompt, promptText } from "./prompts.ts";

Deno.test("prompts: each question is read back from its own text", () => {
  const all: Prompt[] = [
    ...CAP_FIELDS.map((field) => ({ kind: "cap" as const, field, hint: "gd-AbC_…" })),
    { kind: "alert", hint: "gd-x-9z…" },
  ];
  for (const p of all) assert.deepEqual(parsePrompt(promptText(p)), p);
  for (const text of ["", "Новое значение: что-то для ключа gd-AbCd…", "Порог предупреждения", "привет"]) {
    assert.equal(parsePrompt(text), null, text);
  }
});

Deno.test("prompts: amounts as a person types them, «нет», and what is not understood", () => {
  assert.equal(parseAmount("5"), 5_000_000_000_000n);
  assert.equal(parseAmount(" 2.50 "), 2_500_000_000_000n);
  assert.equal(parseAmount("2,5"), 2_500_000_000_000n);
  assert.equal(parseAmount("$3"), 3_000_000_000_000n);
  assert.equal(parseAmount("0.000000000001"), 1n);
  assert.equal(parseAmount("нет"), null);
  assert.equal(parseAmount("Нет"), null);
  for (const t of ["", "пять", "-5", "1e3", "5.0000000000001", "1234567890", "5 долларов"]) {
    assert.equal(parseAmount(t), undefined, t);
  }
});
