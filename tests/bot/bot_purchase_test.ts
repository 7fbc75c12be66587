/**
 * Buying through the bot: the whole Telegram Stars purchase ending with a working key, a payment
 * credited exactly once, a method switched off mid-flow, and a manual payment confirmed from the admin chat.
 */
import assert from "node:assert/strict";
import { post } from "../support/harness.ts";
import {
  addPackage,
  ADMIN_CHAT,
  buyWithStars,
  keyIn,
  keysOf,
  PUBLIC_BASE_URL,
  startBotGateway,
} from "../support/bot_harness.ts";

const ask = (model = "k3") => ({
  model,
  max_tokens: 20,
  messages: [{ role: "user", content: "Привет [[sim:words=3]]" }],
});

Deno.test("bot purchase: /buy → package → Stars invoice → pre-checkout → payment: a new key that works, its balance the package's credit", async () => {
  const lines: string[] = [];
  const gw = await startBotGateway({ LOG_LEVEL: "debug" }, { logSink: (l) => lines.push(l) });
  let key = "";
  try {
    const pkg = await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    await addPackage(gw, { name: "Про", creditUsd: "25.00", price: 200 });
    const chat = gw.chat(30_001);
    assert.equal(await chat.send("/buy"), 200);
    const list = chat.last();
    const buttons = (list as any).reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
    assert.deepEqual(buttons, ["Старт — 50 XTR", "Про — 200 XTR"]);
    assert.equal(await chat.press(/^Старт — 50 XTR$/), 200);
    assert.match(chat.last().text!, /^«Старт»: \$5\.00 за 50 XTR\.\nВыберите способ оплаты:$/);
    // Only the methods available now: the seeded manual method is off.
    const methods = (chat.last() as any).reply_markup.inline_keyboard.flat().map((b: { text: string }) =>
      b.text
    );
    assert.deepEqual(methods, ["Telegram Stars"]);

    const { invoice, paid } = await buyWithStars(chat, /^Старт — 50 XTR$/, "charge-30001-1");
    assert.equal(invoice.params.currency, "XTR");
    assert.deepEqual(invoice.params.prices, [{ label: "Старт", amount: 50 }]);
    assert.match(invoice.params.payload, /^pay_/);
    const payment = await gw.t.gw.app.shop.getPayment(invoice.params.payload);
    assert.equal(payment?.packageId, pkg.id);
    assert.equal(payment?.status, "credited");

    key = keyIn(paid.text!, paid.entities);
    assert.match(key, /^gd-[A-Za-z0-9_-]{43}$/);
    assert.ok(paid.text!.includes(`Адрес шлюза: ${PUBLIC_BASE_URL} (клиенты OpenAI: ${PUBLIC_BASE_URL}/v1)`));
    assert.ok(paid.text!.includes("Баланс: $5.00."));

    const [rec] = await keysOf(gw, chat.id);
    const view = await gw.t.admin("GET", `/admin/keys/${rec!.id}`);
    assert.equal(view.json.balance_usd, "5.00");
    assert.equal(view.json.credited_usd, "5.00");
    const ledger = await gw.t.gw.app.shop.ledger(rec!.id);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.amountUsd, e.reference]),
      [["credit", 5_000_000_000_000n, `payment:${invoice.params.payload}`]],
    );

    const res = await post(gw.t.url + "/v1/chat/completions", key, ask());
    assert.equal(res.status, 200);
    assert.equal((await res.json()).object, "chat.completion");
    const after = await gw.t.admin("GET", `/admin/keys/${rec!.id}`);
    assert.equal(after.json.credited_usd, "5.00");
    assert.ok(after.json.spent_usd !== "0.00", "the request was charged to the bought key");
  } finally {
    await gw.close();
  }
  assert.ok(lines.length > 0);
  assert.ok(!lines.some((l) => l.includes(key.slice(3))), "the issued key in no log line");
});

Deno.test("bot purchase: a duplicate successful_payment credits nothing more; a second purchase tops up without showing a key", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const chat = gw.chat(30_002);
    const { invoice } = await buyWithStars(chat, /^Старт — 50 XTR$/, "charge-30002-1");
    const [rec] = await keysOf(gw, chat.id);
    // Telegram sends the payment again (a new update id, the same charge): credited once.
    const mark = gw.fake.calls.length;
    assert.equal(await chat.deliver(chat.paymentUpdate(invoice, "charge-30002-1")), 200);
    assert.deepEqual(chat.textsSince(mark), [`Платёж ${invoice.params.payload} уже зачислен.`]);
    assert.equal((await gw.t.admin("GET", `/admin/keys/${rec!.id}`)).json.credited_usd, "5.00");
    assert.equal((await keysOf(gw, chat.id)).length, 1);

    // A later purchase tops up the chat's one key: the hint only, never a key again.
    const { paid } = await buyWithStars(chat, /^Старт — 50 XTR$/, "charge-30002-2");
    assert.equal(paid.text!.split("\n")[0], `Оплата получена: ключ ${rec!.hint} пополнен на $5.00.`);
    assert.throws(() => keyIn(paid.text!, paid.entities));
    assert.equal((await gw.t.admin("GET", `/admin/keys/${rec!.id}`)).json.credited_usd, "10.00");
    assert.equal((await keysOf(gw, chat.id)).length, 1);
  } finally {
    await gw.close();
  }
});

Deno.test("bot purchase: Stars switched off after the invoice — pre-checkout refused; a payment that still arrives is refund_due, nothing credited, the operator sees and refunds it", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Старт", creditUsd: "5.00", price: 50 });
    const chat = gw.chat(30_003);
    const admin = gw.chat(ADMIN_CHAT);
    assert.equal(await chat.send("/buy"), 200);
    assert.equal(await chat.press(/^Старт — 50 XTR$/), 200);
    const mark = gw.fake.calls.length;
    assert.equal(await chat.press(/^Telegram Stars$/), 200);
    const invoice = await gw.fake.waitFor("sendInvoice", (c) => c.params.chat_id === chat.id, { from: mark });

    // A forwarded invoice paid from another chat is refused (it would credit a key that is not the payer's).
    const other = gw.chat(30_013);
    const { preCheckout: foreign } = await other.payInvoiceCheckOnly(invoice);
    assert.deepEqual([foreign.params.ok, foreign.params.error_message], [
      false,
      "Этот счёт выставлен не вам. Откройте /buy.",
    ]);
    assert.equal((await gw.t.gw.app.shop.getPayment(invoice.params.payload))?.status, "pending");

    // The operator switches Stars off from the admin chat.
    const m2 = gw.fake.calls.length;
    assert.equal(await admin.send("/method stars off"), 200);
    assert.deepEqual(admin.textsSince(m2), ["Способ stars (Telegram Stars): выключен."]);

    const { preCheckout } = await chat.payInvoice(invoice, "charge-30003-1");
    assert.equal(preCheckout.params.ok, false);
    assert.equal(preCheckout.params.error_message, "Этот способ оплаты сейчас недоступен. Откройте /buy.");
    // payInvoice delivered the payment anyway (Telegram could still send one): recorded, not credited.
    const told = chat.textsSince(m2).pop()!;
    assert.match(told, /^Оплата получена, но способ оплаты или пакет отключили после выставления счёта\./);
    assert.deepEqual(await keysOf(gw, chat.id), [], "no key issued");
    const due = await gw.t.admin("GET", "/admin/payments?status=refund_due");
    assert.equal(due.status, 200);
    assert.deepEqual(due.json.data.map((p: { id: string }) => p.id), [invoice.params.payload]);
    // The buyer's /buy no longer offers Stars.
    assert.equal(await chat.send("/buy"), 200);
    assert.equal(await chat.press(/^Старт — 50 XTR$/), 200);
    assert.equal(chat.last().text, "Сейчас нет доступных способов оплаты. Попробуйте позже.");

    // The operator refunds it from the admin chat: the Stars go back through Telegram.
    const m3 = gw.fake.calls.length;
    assert.equal(await admin.send(`/refund ${invoice.params.payload}`), 200);
    const refunds = gw.fake.calls.slice(m3).filter((c) => c.method === "refundStarPayment");
    assert.deepEqual(refunds.map((c) => c.params), [{
      user_id: chat.id,
      telegram_payment_charge_id: "charge-30003-1",
    }]);
    assert.deepEqual(admin.textsSince(m3), [`Платёж ${invoice.params.payload} возвращён.`]);
    assert.deepEqual(chat.textsSince(m3), [`Платёж ${invoice.params.payload} возвращён оператором.`]);
    assert.equal((await gw.t.gw.app.shop.getPayment(invoice.params.payload))?.status, "refunded");
  } finally {
    await gw.close();
  }
});

Deno.test("bot purchase: a manual payment — details and the payment id, confirmed by an admin chat command, the key shown once", async () => {
  const gw = await startBotGateway();
  try {
    await addPackage(gw, { name: "Рубли", creditUsd: "3.00", price: 29_900, currency: "RUB" });
    await gw.t.gw.app.shop.updatePaymentMethod("manual", {
      available: true,
      details: "Карта 2200 0000 0000 0000",
    });
    const chat = gw.chat(30_004);
    const admin = gw.chat(ADMIN_CHAT);
    assert.equal(await chat.send("/buy"), 200);
    assert.equal(await chat.press(/^Рубли — 299\.00 RUB$/), 200);
    // Stars only sell XTR packages: the manual method alone.
    const methods = (chat.last() as any).reply_markup.inline_keyboard.flat().map((b: { text: string }) =>
      b.text
    );
    assert.deepEqual(methods, ["Перевод по реквизитам"]);
    assert.equal(await chat.press(/^Перевод по реквизитам$/), 200);
    const details = chat.last();
    assert.match(details.text!, /^«Рубли»: к оплате 299\.00 RUB\.\nРеквизиты: Карта 2200 0000 0000 0000\n/);
    const codeEntity = details.entities!.find((e) => e.type === "code")!;
    const paymentId = details.text!.slice(codeEntity.offset, codeEntity.offset + codeEntity.length);
    assert.match(paymentId, /^pay_/);
    assert.equal((await gw.t.gw.app.shop.getPayment(paymentId))?.status, "pending");

    // A buyer cannot confirm; the admin can, once.
    const m1 = gw.fake.calls.length;
    assert.equal(await chat.send(`/confirm ${paymentId}`), 200);
    assert.equal((await gw.t.gw.app.shop.getPayment(paymentId))?.status, "pending");
    assert.ok(chat.textsSince(m1)[0]!.startsWith("Этот бот продаёт ключи"));
    const m2 = gw.fake.calls.length;
    assert.equal(await admin.send(`/confirm ${paymentId}`), 200);
    assert.deepEqual(admin.textsSince(m2), [`Платёж ${paymentId}: зачислен.`]);
    const sent = gw.fake.calls.slice(m2).find((c) =>
      c.method === "sendMessage" && c.params.chat_id === chat.id
    )!;
    const key = keyIn(sent.params.text, sent.params.entities);
    const res = await post(gw.t.url + "/v1/chat/completions", key, ask());
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const [rec] = await keysOf(gw, chat.id);
    assert.equal((await gw.t.admin("GET", `/admin/keys/${rec!.id}`)).json.credited_usd, "3.00");

    const m3 = gw.fake.calls.length;
    assert.equal(await admin.send(`/confirm ${paymentId}`), 200);
    assert.deepEqual(admin.textsSince(m3), [`Платёж ${paymentId}: уже был зачислен.`]);
    assert.deepEqual(chat.textsSince(m3), [], "the key is never shown again");
    assert.equal((await gw.t.admin("GET", `/admin/keys/${rec!.id}`)).json.credited_usd, "3.00");
  } finally {
    await gw.close();
  }
});
