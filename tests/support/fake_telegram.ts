/**
 * A local fake of the Telegram Bot API for the bot's tests: Deno.serve on a free loopback port,
 * POST /bot<token>/<method> answered with the Bot API's real response shapes ({ok, result} or {ok: false,
 * error_code, description}), every call recorded in order. getUpdates is a real long poll over a queue the
 * test pushes updates into (offsets confirm, `timeout` holds the request). `hang: true` accepts connections
 * and never answers until closed: Telegram unreachable in the worst way.
 */
import type { Message, Update, User } from "grammy/types";

export const BOT_TOKEN = "7000001:test-token_0123456789";

export interface Call {
  method: string;
  params: Record<string, any>;
}

export interface FakeTelegram {
  /** The API root to give the bot (TELEGRAM_API_ROOT). */
  url: string;
  bot: User;
  /** Every call in arrival order. */
  calls: Call[];
  callsOf(method: string): Call[];
  /** Resolves with the first call (from `from` on in `calls`) matching; rejects after `timeoutMs`. */
  waitFor(
    method: string,
    match?: (c: Call) => boolean,
    opts?: { from?: number; timeoutMs?: number },
  ): Promise<Call>;
  /** Queues an update for getUpdates (long polling). */
  push(update: Update): void;
  /** The messages the bot sent or edited, by chat, latest version of each. */
  messagesTo(chatId: number): Message[];
  close(): Promise<void>;
}

/** Methods the bot calls and what each answers (the result's shape as the Bot API documents it). */
type Answer = (params: Record<string, any>) => unknown;

export function startFakeTelegram(
  opts: { hang?: boolean; token?: string } = {},
): Promise<FakeTelegram> {
  const token = opts.token ?? BOT_TOKEN;
  const bot: User = {
    id: Number(token.split(":")[0]),
    is_bot: true,
    first_name: "Магазин ключей",
    username: "gd_shop_bot",
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  } as User;
  const calls: Call[] = [];
  const listeners = new Set<() => void>();
  const queue: Update[] = [];
  const messages = new Map<number, Map<number, Message>>();
  let nextMessageId = 1000;
  let closing = false;
  const closed = Promise.withResolvers<void>();

  const now = () => Math.floor(Date.now() / 1000);
  const chat = (id: number) => ({ id, type: "private" as const, first_name: `Покупатель ${id}` });
  const keep = (m: Message) => {
    const byChat = messages.get(m.chat.id) ?? new Map<number, Message>();
    byChat.set(m.message_id, m);
    messages.set(m.chat.id, byChat);
    return m;
  };
  const sent = (p: Record<string, any>, extra: Record<string, unknown>): Message =>
    keep({
      message_id: nextMessageId++,
      from: bot,
      chat: chat(Number(p.chat_id)),
      date: now(),
      ...(p.reply_markup ? { reply_markup: p.reply_markup } : {}),
      ...extra,
    } as Message);

  const answers: Record<string, Answer> = {
    getMe: () => bot,
    setMyCommands: () => true,
    setWebhook: () => true,
    deleteWebhook: () => true,
    sendMessage: (p) => sent(p, { text: p.text, ...(p.entities ? { entities: p.entities } : {}) }),
    editMessageText: (p) => {
      const old = messages.get(Number(p.chat_id))?.get(Number(p.message_id));
      if (!old) throw new ApiError(400, "Bad Request: message to edit not found");
      const { reply_markup: _, ...rest } = old as Message & { reply_markup?: unknown };
      return keep({
        ...rest,
        text: p.text,
        edit_date: now(),
        ...(p.entities ? { entities: p.entities } : {}),
        ...(p.reply_markup ? { reply_markup: p.reply_markup } : {}),
      } as Message);
    },
    answerCallbackQuery: () => true,
    sendInvoice: (p) =>
      sent(p, {
        invoice: {
          title: p.title,
          description: p.description,
          start_parameter: "",
          currency: p.currency,
          total_amount: (p.prices as { amount: number }[]).reduce((s, x) => s + x.amount, 0),
        },
      }),
    answerPreCheckoutQuery: () => true,
    refundStarPayment: () => true,
  };

  class ApiError extends Error {
    constructor(readonly code: number, readonly description: string) {
      super(description);
    }
  }

  const record = (method: string, params: Record<string, any>) => {
    calls.push({ method, params });
    for (const l of [...listeners]) l();
  };

  /** getUpdates: what is queued from `offset` on (earlier ones are confirmed and dropped), waiting up to
   *  `timeout` seconds for one to arrive. */
  async function getUpdates(p: Record<string, any>, signal: AbortSignal): Promise<Update[]> {
    const offset = Number(p.offset ?? 0);
    const pending = () => {
      while (queue.length > 0 && queue[0]!.update_id < offset) queue.shift();
      return queue.slice(0, Number(p.limit ?? 100));
    };
    const deadline = Date.now() + Math.min(Number(p.timeout ?? 0), 50) * 1000;
    while (pending().length === 0 && Date.now() < deadline && !closing && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          listeners.delete(wake);
          clearTimeout(timer);
          signal.removeEventListener("abort", wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(0, deadline - Date.now()));
        listeners.add(wake);
        signal.addEventListener("abort", wake);
        closed.promise.then(wake);
      });
    }
    return pending();
  }

  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    if (opts.hang) {
      await closed.promise; // never answers while open
      return new Response(null, { status: 503 });
    }
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(req.url).pathname);
    if (!m) return json(404, { ok: false, error_code: 404, description: "Not Found" });
    if (m[1] !== token) return json(401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = m[2]!;
    const text = await req.text();
    const params = text === "" ? {} : JSON.parse(text) as Record<string, any>;
    record(method, params);
    if (method === "getUpdates") return json(200, { ok: true, result: await getUpdates(params, req.signal) });
    const answer = answers[method];
    if (!answer) return json(404, { ok: false, error_code: 404, description: "Not Found: method not found" });
    try {
      return json(200, { ok: true, result: answer(params) });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return json(err.code, { ok: false, error_code: err.code, description: err.description });
    }
  });

  return Promise.resolve({
    url: `http://127.0.0.1:${server.addr.port}`,
    bot,
    calls,
    callsOf: (method) => calls.filter((c) => c.method === method),
    waitFor(method, match = () => true, { from = 0, timeoutMs = 10_000 } = {}) {
      const find = () => calls.slice(from).find((c) => c.method === method && match(c));
      const hit = find();
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const check = () => {
          const c = find();
          if (!c) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(c);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`fake Telegram: no ${method} call within ${timeoutMs} ms`));
        }, timeoutMs);
        listeners.add(check);
      });
    },
    push(update) {
      queue.push(update);
      for (const l of [...listeners]) l();
    },
    messagesTo: (chatId) => [...(messages.get(chatId)?.values() ?? [])],
    async close() {
      closing = true;
      closed.resolve();
      await server.shutdown();
    },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
