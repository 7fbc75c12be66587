/**
 * The key shop bot in webhook mode: the route on the gateway's own server, Telegram's secret
 * header, each update once, the commands menu, help, private chats only and the per-chat command rate.
 */
import assert from "node:assert/strict";
import { BOT_TOKEN } from "../support/fake_telegram.ts";
import { PUBLIC_BASE_URL, startBotGateway, WEBHOOK_SECRET } from "../support/bot_harness.ts";

const HELP_START = "Этот бот продаёт ключи gd-… к шлюзу моделей";

Deno.test("bot webhook: registered under PUBLIC_BASE_URL with the secret; setMyCommands lists the 8 commands in Russian", async () => {
  const gw = await startBotGateway();
  try {
    const set = gw.fake.callsOf("setWebhook");
    assert.equal(set.length, 1);
    assert.match(set[0]!.params.url, new RegExp(`^${PUBLIC_BASE_URL}/telegram/[0-9a-f]{32}$`));
    assert.equal(set[0]!.params.secret_token, WEBHOOK_SECRET);
    assert.deepEqual(set[0]!.params.allowed_updates, ["message", "callback_query", "pre_checkout_query"]);
    assert.deepEqual(gw.fake.callsOf("setMyCommands").map((c) => c.params.commands), [[
      { command: "start", description: "Начать: что умеет бот" },
      { command: "buy", description: "Купить пакет или пополнить ключ" },
      { command: "keys", description: "Мои ключи: сменить или отозвать" },
      { command: "balance", description: "Баланс, удержания и последние запросы" },
      { command: "caps", description: "Лимиты расходов и резерва" },
      { command: "theta", description: "Приостановить или возобновить theta" },
      { command: "alerts", description: "Предупреждение о низком балансе" },
      { command: "help", description: "Список команд" },
    ]]);
    // Webhook mode never polls.
    assert.equal(gw.fake.callsOf("getUpdates").length, 0);
  } finally {
    await gw.close();
  }
});

Deno.test("bot webhook: a wrong or missing secret is 401 telegram_secret_mismatch and nothing is processed; another hook is 404", async () => {
  const gw = await startBotGateway();
  try {
    const chat = gw.chat(10_001);
    const update = chat.message("/start");
    const before = gw.fake.calls.length;
    assert.equal(await gw.post(update, "wrong-secret-but-long-enough"), 401);
    assert.equal(await gw.post(update, null), 401);
    assert.equal(await gw.post(update, WEBHOOK_SECRET.slice(0, -1)), 401);
    const res = await fetch(gw.t.url + gw.hookPath, {
      method: "POST",
      headers: { "x-telegram-bot-api-secret-token": "nope", "content-type": "application/json" },
      body: JSON.stringify(update),
    });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "telegram_secret_mismatch");
    assert.deepEqual(gw.fake.calls.slice(before), [], "no Bot API call for a refused update");
    // Another hook under /telegram/ is no route; the right secret does not help there.
    const other = await fetch(`${gw.t.url}/telegram/${"0".repeat(32)}`, {
      method: "POST",
      headers: { "x-telegram-bot-api-secret-token": WEBHOOK_SECRET, "content-type": "application/json" },
      body: JSON.stringify(update),
    });
    assert.equal(other.status, 404);
    assert.equal((await other.json()).error.code, "route_not_found");
    assert.deepEqual(gw.fake.calls.slice(before), []);
    // Refused updates were not recorded as seen: the same update with the secret is processed.
    assert.equal(await gw.post(update), 200);
    assert.deepEqual(chat.textsSince(before).length, 1);
    assert.match(chat.textsSince(before)[0]!, /^Здравствуйте!/);
  } finally {
    await gw.close();
  }
});

Deno.test("bot webhook: an update Telegram retries (same update_id) is processed once", async () => {
  const gw = await startBotGateway();
  try {
    const chat = gw.chat(10_002);
    const update = chat.message("/help");
    const before = gw.fake.calls.length;
    assert.equal(await gw.post(update), 200);
    assert.equal(await gw.post(update), 200);
    assert.equal(await gw.post(update), 200);
    const texts = chat.textsSince(before);
    assert.equal(texts.length, 1);
    assert.ok(texts[0]!.startsWith(HELP_START));
  } finally {
    await gw.close();
  }
});

Deno.test("bot webhook: /start, /help, unknown commands and text get help in Russian; admin commands are help for others", async () => {
  const gw = await startBotGateway();
  try {
    const chat = gw.chat(10_003);
    const before = gw.fake.calls.length;
    for (
      const text of ["/help", "/nosuch", "привет", "/confirm pay_1", "/refund pay_1", "/method stars off"]
    ) {
      assert.equal(await chat.send(text), 200, text);
    }
    const texts = chat.textsSince(before);
    assert.equal(texts.length, 6);
    for (const t of texts) {
      assert.ok(t.startsWith(HELP_START), t);
      for (const cmd of ["/start", "/buy", "/keys", "/balance", "/caps", "/theta", "/alerts", "/help"]) {
        assert.ok(t.includes(cmd), `${cmd} in help`);
      }
      assert.ok(!t.includes("/confirm"), "operator commands are not shown to buyers");
    }
    // The methods were not switched by a buyer's /method.
    const methods = await gw.t.admin("GET", "/admin/payment-methods");
    assert.equal(methods.status, 200);
    assert.equal(methods.json.data.find((m: { id: string }) => m.id === "stars").available, true);
    // /start greets.
    const mark = gw.fake.calls.length;
    await chat.send("/start");
    assert.match(chat.textsSince(mark)[0]!, /^Здравствуйте!/);
  } finally {
    await gw.close();
  }
});

Deno.test("bot webhook: a group chat is told the bot works in private chats only", async () => {
  const gw = await startBotGateway();
  try {
    const before = gw.fake.calls.length;
    const update = {
      update_id: 777_001,
      message: {
        message_id: 1,
        from: { id: 10_004, is_bot: false, first_name: "Группа" },
        chat: { id: -100_500, type: "supergroup", title: "Группа" },
        date: Math.floor(Date.now() / 1000),
        text: "/keys",
        entities: [{ type: "bot_command", offset: 0, length: 5 }],
      },
    };
    assert.equal(await gw.post(update as never), 200);
    const sent = gw.fake.calls.slice(before).filter((c) => c.method === "sendMessage");
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.params.chat_id, -100_500);
    assert.match(sent[0]!.params.text, /только в личном чате/);
  } finally {
    await gw.close();
  }
});

Deno.test("bot webhook: per-chat command rate — a polite refusal once, other chats unaffected", async () => {
  const gw = await startBotGateway({ BOT_COMMANDS_PER_MINUTE: "3" });
  try {
    const chat = gw.chat(10_005);
    const before = gw.fake.calls.length;
    for (let i = 0; i < 6; i++) assert.equal(await chat.send("/help"), 200);
    const texts = chat.textsSince(before);
    assert.equal(texts.length, 4, texts.join(" | "));
    for (const t of texts.slice(0, 3)) assert.ok(t.startsWith(HELP_START));
    assert.match(texts[3]!, /^Слишком много команд подряд\. Подождите \d+ с и повторите\.$/);
    const other = gw.chat(10_006);
    const mark = gw.fake.calls.length;
    assert.equal(await other.send("/help"), 200);
    assert.equal(other.textsSince(mark).length, 1);
  } finally {
    await gw.close();
  }
});

Deno.test("bot webhook: the hook, the secret and the bot token appear in no log line", async () => {
  const lines: string[] = [];
  const gw = await startBotGateway({ LOG_LEVEL: "debug" }, { logSink: (l) => lines.push(l) });
  try {
    const chat = gw.chat(10_007);
    await chat.send("/help");
    await gw.post(chat.message("/help"), "wrong-secret-but-long-enough");
    await fetch(`${gw.t.url}/telegram/${"0".repeat(32)}`, { method: "POST", body: "{}" }).then((r) =>
      r.body?.cancel()
    );
  } finally {
    await gw.close();
  }
  const hook = gw.hookPath.split("/").pop()!;
  assert.ok(lines.some((l) => l.includes('"route":"/telegram/:hook"')), "the webhook requests are logged");
  for (const secret of [hook, WEBHOOK_SECRET, BOT_TOKEN, BOT_TOKEN.split(":")[1]!]) {
    assert.ok(!lines.some((l) => l.includes(secret)), `${secret.slice(0, 6)}… in a log line`);
  }
});
