/**
 * Deterministic Russian word sequences. Word i is computed on demand, so a 100k-word
 * answer is never materialised unless a non-streaming body needs it.
 */

const VOCAB = [
  "система",
  "работает",
  "стабильно",
  "и",
  "быстро",
  "запрос",
  "обработан",
  "полностью",
  "данные",
  "получены",
  "вовремя",
  "ответ",
  "звучит",
  "вполне",
  "разумно",
  "сервер",
  "шлюз",
  "передаёт",
  "токены",
  "без",
  "потерь",
  "модель",
  "думает",
  "спокойно",
  "каждое",
  "слово",
  "важно",
  "поток",
  "идёт",
  "ровно",
  "проверка",
  "прошла",
  "успешно",
  "текст",
  "остаётся",
  "детерминированным",
  "утро",
  "вечер",
  "река",
  "лес",
  "город",
  "дорога",
  "ясно",
  "тихо",
  "далее",
  "снова",
  "вместе",
  "потом",
  "сегодня",
  "завтра",
  "пример",
  "задача",
  "решение",
  "вопрос",
  "мысль",
  "идея",
  "проект",
  "счёт",
  "баланс",
  "порядок",
  "число",
  "строка",
  "символ",
  "итог",
];

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function quoted(snippet: string, close: string): string[] {
  if (!snippet) return ["«" + close];
  const parts = snippet.split(" ");
  parts[0] = "«" + parts[0];
  parts[parts.length - 1] += close;
  return parts;
}

export class Words {
  constructor(private readonly head: string[], private readonly seed: number) {}

  word(i: number): string {
    return i < this.head.length ? this.head[i]! : VOCAB[(this.seed + i * 7) % VOCAB.length]!;
  }

  /** Words [from, to) as they appear in the text: every word except word 0 has a leading space. */
  slice(from: number, to: number): string {
    let s = "";
    for (let i = from; i < to; i++) s += i === 0 ? this.word(0) : " " + this.word(i);
    return s;
  }

  static answer(seedText: string, snippet: string): Words {
    return new Words(["Ответ", "симулятора", "на", ...quoted(snippet, "»:")], fnv1a(seedText));
  }

  static toolResult(seedText: string, snippet: string): Words {
    return new Words(["Результат", "инструмента", "получен:", ...quoted(snippet, "».")], fnv1a(seedText) + 5);
  }

  static reasoning(seedText: string, snippet: string): Words {
    return new Words(["Рассуждение", "симулятора", "о", ...quoted(snippet, "»:")], fnv1a(seedText) + 11);
  }
}
