/**
 * Managing a key through the bot alone: rotate and revoke, caps and theta taking effect on the
 * gateway's next request, the balance view, the low-balance alert once per crossing, and one chat unable to
 * see or act on another chat's keys.
 */
import assert from "node:assert/strict";
import type { Message } from "grammy/types";
import { encodeCallback } from "../../src/bot/callback_data.ts";
import { post } from "../support/harness.ts";
import {
  addPackage,
  type BotGateway,
  buyWithStars,
  keyIn,
  keysOf,
  startBotGateway,
  type TestChat,
} from "../support/bot_harness.ts";

const ask = (model = "k3") => ({
  model,
  max_tokens: 20,
  messages: [{ role: "user", content: "Привет [[sim:words=3]]" }],
});

let charges = 0;
/** A chat with a bought $5.00 key: the key and its record. */
async function withKey(gw: BotGateway, chatId: number) {
  const chat = gw.chat(chatId);
  const { paid } = await buyWithStars(chat, /^Старт — 50 XTR$/, `charge-${chatId}-${++charges}`);
  const [rec] = await keysOf(gw, chatId);
  return { chat, key: keyIn(paid.text!, paid.entities), rec: rec! };
}

async function status(gw: BotGateway, key: string, model = "k3"): Promise<[number, string | null]> {
  const res = await post(gw.t.url + "/v1/chat/completions", key, ask(model));
  const body = await res.json();
  return [res.status, body.error?.code ?? null];
}

/** The bot's question (ForceReply) last sent to the chat. */
function lastQuestion(chat: TestChat): Message {
  const q = chat.messages().filter((m) => (m as any).reply_markup?.force_reply === true).pop();
  if (!q) throw new Error("no question asked");
  return q;
}

Deno.test("bot keys: rotate — the old key refused 401 on the next request, the new one works with the same balance; revoke", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const { chat, key, rec } = await withKey(gw, 40_001);
    assert.equal(await chat.send("/keys"), 200);
    assert.equal(chat.last().text, `Ваши ключи:\n• ${rec.hint} — активен, баланс $5.00`);
    assert.equal(await chat.press(new RegExp(`^Сменить ${rec.hint}`)), 200);
    assert.match(chat.last().text!, /^Сменить ключ gd-.{4}…\? Баланс и настройки останутся/);
    assert.deepEqual(await status(gw, key), [200, null], "nothing changes before the confirmation");
    assert.equal(await chat.press(/^Да, сменить$/), 200);
    const shown = chat.last();
    const fresh = keyIn(shown.text!, shown.entities);
    assert.notEqual(fresh, key);
    assert.equal((shown as any).reply_markup, undefined, "the confirmation's buttons are gone");
    assert.deepEqual(await status(gw, key), [401, "invalid_api_key"]);
    assert.deepEqual(await status(gw, fresh), [200, null]);
    const view = await gw.t.admin("GET", `/admin/keys/${rec.id}`);
    assert.equal(view.json.credited_usd, "5.00");
    assert.equal((await keysOf(gw, chat.id)).length, 1, "the same key, a new secret");

    // Revoke: cancelled first, then confirmed.
    assert.equal(await chat.send("/keys"), 200);
    assert.equal(await chat.press(/^Отозвать /), 200);
    assert.equal(await chat.press(/^Отмена$/), 200);
    assert.equal(chat.last().text, "Отменено.");
    assert.deepEqual(await status(gw, fresh), [200, null]);
    assert.equal(await chat.send("/keys"), 200);
    assert.equal(await chat.press(/^Отозвать /), 200);
    assert.equal(await chat.press(/^Да, отозвать$/), 200);
    const [after] = await keysOf(gw, chat.id);
    assert.equal(chat.last().text, `Ключ ${after!.hint} отозван.`);
    assert.deepEqual(await status(gw, fresh), [401, "api_key_revoked"]);
    assert.equal(await chat.send("/keys"), 200);
    assert.equal(chat.last().text, `Ваши ключи:\n• ${after!.hint} — отозван`);
  } finally {
    await gw.close();
  }
});

Deno.test("bot keys: a cap set in the bot refuses the next request with its code; «нет» lifts it", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const { chat, key, rec } = await withKey(gw, 40_002);
    assert.equal(await chat.send("/caps"), 200);
    assert.equal(
      chat.last().text,
      `Лимиты ключа ${rec.hint}:\n• лимит расходов за час: нет\n• лимит расходов за сутки: нет\n` +
        "• лимит резерва за час: нет\n• лимит резерва за сутки: нет\n" +
        "Запрос сверх лимита шлюз отклонит с кодом лимита (429).",
    );
    assert.equal(await chat.press(/^Изменить: лимит расходов за сутки$/), 200);
    const q = lastQuestion(chat);
    assert.equal(q.text!.split("\n")[0], `Новое значение: лимит расходов за сутки для ключа ${rec.hint}`);
    const mark = gw.fake.calls.length;
    assert.equal(await chat.send("0,000001", q), 200);
    assert.equal(chat.textsSince(mark)[0], `Готово: лимит расходов за сутки для ${rec.hint} — $0.000001.`);
    assert.deepEqual(await status(gw, key), [429, "daily_spend_limit"]);
    const view = await gw.t.admin("GET", `/admin/keys/${rec.id}`);
    assert.equal(view.json.caps.daily_spend_usd, "0.000001");

    // Not understood: nothing changes.
    assert.equal(await chat.press(/^Изменить: лимит расходов за сутки$/), 200);
    const m2 = gw.fake.calls.length;
    assert.equal(await chat.send("пять долларов", lastQuestion(chat)), 200);
    assert.match(chat.textsSince(m2)[0]!, /^Не понял сумму/);
    assert.deepEqual(await status(gw, key), [429, "daily_spend_limit"]);
    assert.equal(await chat.send("нет", lastQuestion(chat)), 200);
    assert.deepEqual(await status(gw, key), [200, null]);
    assert.equal((await gw.t.admin("GET", `/admin/keys/${rec.id}`)).json.caps.daily_spend_usd, null);

    // A reserve cap the same way: its own code.
    assert.equal(await chat.send("/caps"), 200);
    assert.equal(await chat.press(/^Изменить: лимит резерва за час$/), 200);
    assert.equal(await chat.send("0.000001", lastQuestion(chat)), 200);
    assert.deepEqual(await status(gw, key), [429, "hourly_reserve_limit"]);
  } finally {
    await gw.close();
  }
});

Deno.test("bot keys: theta paused from the bot → 403 api_key_paused, other families served; resumed; membership shown", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const { chat, key, rec } = await withKey(gw, 40_003);
    assert.equal(await chat.send("/theta"), 200);
    assert.equal(chat.last().text, `Ключ ${rec.hint}:\n• theta: работает\n• членство: нет`);
    assert.equal(await chat.press(/^Приостановить theta$/), 200);
    assert.equal(chat.last().text, `Theta для ${rec.hint} приостановлена.`);
    assert.deepEqual(await status(gw, key, "theta3.8-omni-flash"), [403, "api_key_paused"]);
    assert.deepEqual(await status(gw, key), [200, null]);
    assert.equal(await chat.send("/theta"), 200);
    assert.match(chat.last().text!, /theta: приостановлена/);
    assert.equal(await chat.press(/^Возобновить theta$/), 200);
    assert.deepEqual(await status(gw, key, "theta3.8-omni-flash"), [200, null]);
  } finally {
    await gw.close();
  }
});

Deno.test("bot keys: /balance shows the balance, the holds and the last requests", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const { chat, key, rec } = await withKey(gw, 40_004);
    assert.equal(await chat.send("/balance"), 200);
    assert.equal(
      chat.last().text,
      `Ключ ${rec.hint} — активен\nБаланс: $5.00\nУдержано открытыми запросами: $0.00\nЗапросов пока не было.`,
    );
    assert.deepEqual(await status(gw, key), [200, null]);
    assert.deepEqual(await status(gw, key, "theta3.8-omni-flash"), [200, null]);
    assert.equal(await chat.send("/balance"), 200);
    const view = (await gw.t.admin("GET", `/admin/keys/${rec.id}`)).json;
    const lines = chat.last().text!.split("\n");
    assert.equal(lines[1], `Баланс: $${view.balance_usd}`);
    assert.equal(lines[3], "Последние запросы:");
    assert.equal(lines.length, 6);
    assert.match(lines[4]!, /^• \d{4}-\d\d-\d\d \d\d:\d\d UTC · theta3\.8-omni-flash · \$0\.\d+ · успешно$/);
    assert.match(lines[5]!, /^• \d{4}-\d\d-\d\d \d\d:\d\d UTC · k3 · \$0\.\d+ · успешно$/);
  } finally {
    await gw.close();
  }
});

Deno.test("bot keys: one chat can neither see nor act on another chat's keys, whatever callback data it forges", async () => {
  const gw = await startBotGateway();
  try {
    const pkg = await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const { key, rec } = await withKey(gw, 40_005);
    const thief = gw.chat(40_006);
    assert.equal(await thief.send("/keys"), 200);
    assert.equal(thief.last().text, "У вас пока нет ключей. Купите пакет: /buy");
    for (const cmd of ["/balance", "/caps", "/theta", "/alerts"]) {
      assert.equal(await thief.send(cmd), 200);
      assert.equal(thief.last().text, "У вас пока нет ключей. Купите пакет: /buy", cmd);
    }
    const anchor = thief.last();
    const forged = [
      encodeCallback({ a: "rotate", key: rec.id }),
      encodeCallback({ a: "rotate_yes", key: rec.id }),
      encodeCallback({ a: "revoke_yes", key: rec.id }),
      encodeCallback({ a: "caps", key: rec.id }),
      encodeCallback({ a: "cap_set", key: rec.id, field: "daily_spend_usd" }),
      encodeCallback({ a: "theta", key: rec.id }),
      encodeCallback({ a: "theta_set", key: rec.id, paused: true }),
      encodeCallback({ a: "alerts", key: rec.id }),
      encodeCallback({ a: "alert_set", key: rec.id }),
      encodeCallback({ a: "pkgkey", pkg: pkg.id, key: rec.id }),
      encodeCallback({ a: "pay", pkg: pkg.id, key: rec.id, method: "stars" }),
    ];
    for (const data of forged) {
      const mark = gw.fake.calls.length;
      assert.equal(await thief.deliver(thief.pressUpdate(anchor, data)), 200);
      const texts = thief.textsSince(mark);
      assert.deepEqual(texts, ["Ключ не найден среди ключей этого чата."], data);
      assert.ok(!texts.join().includes(rec.hint), "the other key's hint is never shown");
    }
    assert.equal(gw.fake.callsOf("sendInvoice").filter((c) => c.params.chat_id === thief.id).length, 0);
    // A forged answer to a question naming the other key's hint.
    const question = {
      ...anchor,
      text: `Новое значение: лимит расходов за сутки для ключа ${rec.hint}`,
    } as Message;
    const m2 = gw.fake.calls.length;
    assert.equal(await thief.send("0.000001", question), 200);
    assert.deepEqual(thief.textsSince(m2), ["Ключ не найден среди ключей этого чата."]);
    // Garbage callback data: "the button is stale", nothing else.
    const m3 = gw.fake.calls.length;
    assert.equal(await thief.deliver(thief.pressUpdate(anchor, "r:key_x:1:2")), 200);
    assert.deepEqual(gw.fake.calls.slice(m3).map((c) => [c.method, c.params.text]), [
      ["answerCallbackQuery", "Эта кнопка устарела. Откройте команду заново."],
    ]);
    // The owner's key is untouched: same secret, not revoked, no caps, theta running.
    assert.deepEqual(await status(gw, key), [200, null]);
    assert.deepEqual(await status(gw, key, "theta3.8-omni-flash"), [200, null]);
    const view = (await gw.t.admin("GET", `/admin/keys/${rec.id}`)).json;
    assert.deepEqual([view.state, view.caps.daily_spend_usd, view.theta.paused], ["active", null, false]);
  } finally {
    await gw.close();
  }
});

Deno.test("bot keys: the low-balance alert arrives once per crossing, with a button to buy more", async () => {
  const gw = await startBotGateway({ BOT_ALERT_CHECK_MS: "20" });
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const { chat, key, rec } = await withKey(gw, 40_007);
    const isAlert = (c: { method: string; params: any }, id: number) =>
      c.method === "sendMessage" && c.params.chat_id === id && /^Баланс ключа/.test(c.params.text);
    const alerts = (id: number) => gw.fake.calls.filter((c) => isAlert(c, id));
    /** Two more chats' alerts, set after now: the second comes from a check that began after this point
     *  (checks run one after another, each sending after it has looked at every key). */
    let barrier = 41_000;
    const fullCheck = async () => {
      for (let i = 0; i < 2; i++) {
        const other = await withKey(gw, ++barrier);
        const mark = gw.fake.calls.length;
        await setThreshold(other.chat, "100");
        await gw.fake.waitFor("sendMessage", (c) => isAlert(c, other.chat.id), { from: mark });
      }
    };

    // The default threshold (10% of $5.00) is not crossed: no alert.
    assert.equal(await chat.send("/alerts"), 200);
    assert.match(
      chat.last().text!,
      new RegExp(`^Порог предупреждения для .{8}: \\$0\\.50 \\(10% от последней покупки\\)\\.`),
    );
    await fullCheck();
    assert.equal(alerts(chat.id).length, 0);
    // A threshold above the balance: crossed at once.
    await setThreshold(chat, "10");
    const first = await gw.fake.waitFor("sendMessage", (c) => isAlert(c, chat.id));
    assert.equal(
      first.params.text,
      `Баланс ключа ${rec.hint} опустился ниже $10.00: осталось $5.00. Пополните его, чтобы запросы не остановились.`,
    );
    assert.deepEqual(first.params.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text), [
      "Пополнить",
    ]);
    await fullCheck();
    assert.equal(alerts(chat.id).length, 1, "once while it stays below");

    // "Пополнить" opens the purchase; the top-up lifts the balance to the threshold: no alert.
    assert.equal(await chat.press(/^Пополнить$/), 200);
    assert.match(chat.last().text!, /^Выберите пакет:/);
    await buyWithStars(chat, /^Старт — 50 XTR$/, `charge-${chat.id}-topup`);
    await fullCheck();
    assert.equal(alerts(chat.id).length, 1);
    // Spending takes it below again: a new crossing, one new alert.
    assert.deepEqual(await status(gw, key), [200, null]);
    const second = await gw.fake.waitFor("sendMessage", (c) => isAlert(c, chat.id), {
      from: gw.fake.calls.indexOf(first) + 1,
    });
    assert.match(
      second.params.text,
      new RegExp(
        `^Баланс ключа ${rec.hint.replace("…", "\\u2026")} опустился ниже \\$10\\.00: осталось \\$9\\.9`,
      ),
    );
    await fullCheck();
    assert.equal(alerts(chat.id).length, 2);
  } finally {
    await gw.close();
  }
});

/** /alerts → "Задать порог" → the amount as a reply. */
async function setThreshold(chat: TestChat, amount: string) {
  assert.equal(await chat.send("/alerts"), 200);
  assert.equal(await chat.press(/^Задать порог$/), 200);
  const mark = chat.gw.fake.calls.length;
  assert.equal(await chat.send(amount, lastQuestion(chat)), 200);
  assert.match(chat.textsSince(mark)[0]!, /^Порог для gd-/);
}
