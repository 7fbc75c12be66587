/**
 * Questions answered by a reply (/caps, /alerts): the bot asks with ForceReply, and the answer is read from
 * the reply together with the question it replies to — the question's first line names what is set and for
 * which key (its hint). So no conversation state is kept in a process: any gateway process can take the
 * answer (webhook mode with several workers). The key is then looked up among the chat's own keys.
 */
import { parseUsd } from "../money/usd.ts";
import { CAP_FIELDS, type CapField } from "./callback_data.ts";

export const CAP_LABEL: Record<CapField, string> = {
  hourly_spend_usd: "лимит расходов за час",
  daily_spend_usd: "лимит расходов за сутки",
  hourly_reserve_usd: "лимит резерва за час",
  daily_reserve_usd: "лимит резерва за сутки",
};

/** The question's markup: the client opens a reply to it, with a hint in the input field. */
export const ASK_AMOUNT = { force_reply: true, input_field_placeholder: "сумма в $ или «нет»" } as const;

export type Prompt = { kind: "cap"; field: CapField; hint: string } | { kind: "alert"; hint: string };

const CAP_LINE = /^Новое значение: (.+) для ключа (gd-\S+)$/;
const ALERT_LINE = /^Порог предупреждения для ключа (gd-\S+)$/;

export function promptText(p: Prompt): string {
  if (p.kind === "cap") {
    return `Новое значение: ${CAP_LABEL[p.field]} для ключа ${p.hint}\n` +
      "Ответьте на это сообщение суммой в долларах (например 5 или 2.50) или словом «нет», чтобы снять лимит.";
  }
  return `Порог предупреждения для ключа ${p.hint}\n` +
    "Ответьте на это сообщение суммой в долларах (например 1.50) или словом «нет»: тогда порог — 10% от " +
    "последней покупки.";
}

/** The question a reply answers, from the first line of the bot's own message; null for any other text. */
export function parsePrompt(text: string): Prompt | null {
  const first = text.split("\n", 1)[0]!;
  const cap = CAP_LINE.exec(first);
  if (cap) {
    const field = CAP_FIELDS.find((f) => CAP_LABEL[f] === cap[1]);
    return field ? { kind: "cap", field, hint: cap[2]! } : null;
  }
  const alert = ALERT_LINE.exec(first);
  return alert ? { kind: "alert", hint: alert[1]! } : null;
}

/** A USD amount as a person types it ("5", "2.50", "2,5", "$3"); null for «нет»; undefined: not understood. */
export function parseAmount(text: string): bigint | null | undefined {
  const t = text.trim().toLowerCase();
  if (t === "нет" || t === "no" || t === "-") return null;
  const m = /^\$?\s*(\d{1,9}(?:[.,]\d{1,12})?)\s*\$?$/.exec(t);
  return m ? parseUsd(m[1]!.replace(",", ".")) : undefined;
}
