/**
 * The bot's tests' harness: a real gateway (tests/support/harness.ts) whose bot talks to a fake Bot API
 * (tests/support/fake_telegram.ts), and chats that send real update shapes — to the gateway's webhook route with
 * Telegram's secret header (webhook mode), or into the fake's getUpdates queue (polling mode).
 */
import type { InlineKeyboardButton, Message, Update } from "grammy/types";
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import type { LogSink } from "../../src/util/log.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { BOT_TOKEN, type Call, type FakeTelegram, startFakeTelegram } from "./fake_telegram.ts";

export const WEBHOOK_SECRET = "test-webhook-secret_0123456789";
export const PUBLIC_BASE_URL = "https://gw.example.test";
export const ADMIN_CHAT = 900_001;

export interface BotGateway {
  t: TestGateway;
  fake: FakeTelegram;
  /** The webhook route's path as the bot registered it with setWebhook (webhook mode). */
  hookPath: string;
  /** Posts one update to the webhook route with the secret header (or `secret`); the HTTP status. */
  post(update: Update, secret?: string | null): Promise<number>;
  chat(id: number): TestChat;
  close(): Promise<void>;
}

let updateIds = 1;
/** Update ids unique across a test file (Telegram's increase; a retried update keeps its id). */
export const nextUpdateId = () => updateIds++;

/** A gateway with the bot in webhook mode (unless `polling`), pointed at a fresh fake Telegram. */
export async function startBotGateway(
  env: Record<string, string> = {},
  opts: { polling?: boolean; fake?: FakeTelegram; logSink?: LogSink } = {},
): Promise<BotGateway> {
  const fake = opts.fake ?? await startFakeTelegram();
  const t = await startTestGateway({
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    TELEGRAM_API_ROOT: fake.url,
    PUBLIC_BASE_URL,
    TELEGRAM_ADMIN_CHAT_IDS: String(ADMIN_CHAT),
    ...(opts.polling ? {} : { TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET }),
    ...env,
  }, opts.logSink ? { logSink: opts.logSink } : {});
  // The bot's start-up calls run in the background: waited for here, so a test's calls come after them.
  await fake.waitFor("getMe");
  await fake.waitFor("setMyCommands");
  let hookPath = "";
  if (!opts.polling) {
    const set = await fake.waitFor("setWebhook");
    hookPath = new URL(set.params.url).pathname;
  }
  const post = async (update: Update, secret: string | null = WEBHOOK_SECRET) => {
    const res = await fetch(t.url + hookPath, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(secret === null ? {} : { "x-telegram-bot-api-secret-token": secret }),
      },
      body: JSON.stringify(update),
    });
    await res.body?.cancel();
    return res.status;
  };
  const gw: BotGateway = {
    t,
    fake,
    hookPath,
    post,
    chat: (id) => new TestChat(gw, id, opts.polling === true),
    async close() {
      try {
        await t.close();
      } finally {
        if (!opts.fake) await fake.close();
      }
    },
  };
  return gw;
}

/** One private chat with the bot (chat id = user id, as Telegram has it). */
export class TestChat {
  constructor(readonly gw: BotGateway, readonly id: number, private readonly polling: boolean) {}

  get user() {
    return { id: this.id, is_bot: false, first_name: `Покупатель ${this.id}`, language_code: "ru" };
  }

  /** Delivers an update as Telegram would in this mode: webhook status, or 200 once queued for polling. */
  async deliver(update: Update): Promise<number> {
    if (!this.polling) return await this.gw.post(update);
    this.gw.fake.push(update);
    return 200;
  }

  message(text: string, replyTo?: Message): Update {
    const command = /^\/\w+/.exec(text);
    return {
      update_id: nextUpdateId(),
      message: {
        message_id: nextUpdateId(),
        from: this.user,
        chat: { id: this.id, type: "private", first_name: this.user.first_name },
        date: Math.floor(Date.now() / 1000),
        text,
        ...(command ? { entities: [{ type: "bot_command", offset: 0, length: command[0].length }] } : {}),
        ...(replyTo ? { reply_to_message: replyTo } : {}),
      },
    } as Update;
  }

  /** Sends a text message (a command when it starts with /). */
  send(text: string, replyTo?: Message): Promise<number> {
    return this.deliver(this.message(text, replyTo));
  }

  /** A button press on `message` with the button's callback data (or forged `data`). */
  pressUpdate(message: Message, data: string): Update {
    return {
      update_id: nextUpdateId(),
      callback_query: {
        id: String(nextUpdateId()),
        from: this.user,
        message,
        chat_instance: `ci-${this.id}`,
        data,
      },
    } as Update;
  }

  /** Presses the button whose text matches on the bot's latest message that has it. */
  async press(label: RegExp): Promise<number> {
    const { message, button } = this.findButton(label);
    return await this.deliver(this.pressUpdate(message, button.callback_data));
  }

  findButton(label: RegExp): { message: Message; button: InlineKeyboardButton.CallbackButton } {
    const msgs = this.messages().reverse();
    for (const m of msgs) {
      const rows =
        (m as Message & { reply_markup?: { inline_keyboard?: InlineKeyboardButton[][] } }).reply_markup
          ?.inline_keyboard ?? [];
      for (const b of rows.flat()) {
        if ("callback_data" in b && label.test(b.text)) return { message: m, button: b };
      }
    }
    throw new Error(
      `no button ${label} in chat ${this.id}: ${msgs.map((m) => m.text ?? "(invoice)").join(" | ")}`,
    );
  }

  /** The bot's messages in this chat, oldest first (latest version of an edited one). */
  messages(): Message[] {
    return this.gw.fake.messagesTo(this.id).sort((a, b) => a.message_id - b.message_id);
  }

  last(): Message {
    const all = this.messages();
    if (all.length === 0) throw new Error(`the bot wrote nothing to chat ${this.id}`);
    return all[all.length - 1]!;
  }

  /** Texts the bot sent or edited in this chat from call index `from` on. */
  textsSince(from: number): string[] {
    return this.gw.fake.calls.slice(from)
      .filter((c) =>
        (c.method === "sendMessage" || c.method === "editMessageText") && c.params.chat_id === this.id
      )
      .map((c) => String(c.params.text));
  }

  /** Pays an invoice with Telegram Stars: pre-checkout, then the payment (which Telegram would not send after a
   *  refused pre-checkout, but a payment may still arrive: the tests send it regardless). */
  async payInvoice(invoice: Call, chargeId: string): Promise<{ preCheckout: Call; status: number }> {
    const { preCheckout } = await this.payInvoiceCheckOnly(invoice);
    const status = await this.deliver(this.paymentUpdate(invoice, chargeId));
    return { preCheckout, status };
  }

  /** The pre-checkout query of an invoice from this chat's user, and the bot's answer to it. */
  async payInvoiceCheckOnly(invoice: Call): Promise<{ preCheckout: Call }> {
    const mark = this.gw.fake.calls.length;
    const queryId = `pcq-${nextUpdateId()}`;
    const pre = {
      update_id: nextUpdateId(),
      pre_checkout_query: {
        id: queryId,
        from: this.user,
        currency: invoice.params.currency,
        total_amount: invoice.params.prices[0].amount,
        invoice_payload: invoice.params.payload,
      },
    } as Update;
    await this.deliver(pre);
    const preCheckout = await this.gw.fake.waitFor(
      "answerPreCheckoutQuery",
      (c) => c.params.pre_checkout_query_id === queryId,
      { from: mark },
    );
    return { preCheckout };
  }

  paymentUpdate(invoice: Call, chargeId: string): Update {
    return {
      update_id: nextUpdateId(),
      message: {
        message_id: nextUpdateId(),
        from: this.user,
        chat: { id: this.id, type: "private", first_name: this.user.first_name },
        date: Math.floor(Date.now() / 1000),
        successful_payment: {
          currency: invoice.params.currency,
          total_amount: invoice.params.prices[0].amount,
          invoice_payload: invoice.params.payload,
          telegram_payment_charge_id: chargeId,
          provider_payment_charge_id: "",
        },
      },
    } as Update;
  }
}

/** The full key in a message's `code` entity (how the bot shows a secret). */
export function keyIn(
  text: string,
  entities: { type: string; offset: number; length: number }[] = [],
): string {
  const e = entities.find((x) =>
    x.type === "code" && text.slice(x.offset, x.offset + x.length).startsWith("gd-")
  );
  if (!e) throw new Error(`no key in: ${text}`);
  return text.slice(e.offset, e.offset + e.length);
}

/** A package on sale, made through the shop as the admin API makes it. */
export async function addPackage(
  gw: BotGateway,
  p: { name: string; creditUsd: string; price: number; currency?: string },
) {
  return await gw.t.gw.app.shop.createPackage({
    name: p.name,
    creditUsd: parseUsd(p.creditUsd),
    price: p.price,
    currency: p.currency ?? "XTR",
    active: true,
  });
}

/**
 * The whole Stars purchase in a chat: /buy, the package's button, the key when asked (`keyHint`), Telegram
 * Stars, the invoice paid. Returns the invoice call and the bot's message after the payment.
 */
export async function buyWithStars(
  chat: TestChat,
  pkgButton: RegExp,
  chargeId: string,
  keyHint?: string,
): Promise<{ invoice: Call; paid: Message }> {
  const fake = chat.gw.fake;
  assert.equal(await chat.send("/buy"), 200);
  assert.equal(await chat.press(pkgButton), 200);
  if (keyHint !== undefined) assert.equal(await chat.press(new RegExp(`^${escapeRe(keyHint)}$`)), 200);
  const mark = fake.calls.length;
  assert.equal(await chat.press(/^Telegram Stars$/), 200);
  const invoice = await fake.waitFor("sendInvoice", (c) => c.params.chat_id === chat.id, { from: mark });
  const { preCheckout, status } = await chat.payInvoice(invoice, chargeId);
  assert.equal(preCheckout.params.ok, true, JSON.stringify(preCheckout.params));
  assert.equal(status, 200);
  const paid = await fake.waitFor(
    "sendMessage",
    (c) => c.params.chat_id === chat.id && /^Оплата получена/.test(c.params.text),
    { from: mark },
  );
  return { invoice, paid: { text: paid.params.text, entities: paid.params.entities } as Message };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The chat's keys as the shop has them (ids for the admin API). */
export async function keysOf(gw: BotGateway, chatId: number) {
  return await gw.t.gw.app.shop.keysOfChat(chatId);
}
