/**
 * /balance: each of the chat's keys with its balance, the credit held by open requests, and its
 * last requests, read back from the usage rows as the usage report and the dashboard read them (src/reports/).
 */
import type { Context } from "grammy";
import type { App } from "../../app.ts";
import { keyView } from "../../accounts/key_operations.ts";
import { usageRequestsPage } from "../../reports/report.ts";
import { usableKeys } from "../chat_keys.ts";
import { Msg } from "../message.ts";
import { chatIdOf, say } from "../reply.ts";
import { T, usd } from "../texts.ts";
import { stateText } from "./keys.ts";

const LAST_REQUESTS = 5;
/** Rows read at most for them (every row is kept: no filter). */
const MAX_SCAN = LAST_REQUESTS;
const STATUS: Record<string, string> = { ok: "успешно", error: "ошибка", cancelled: "прерван" };

export async function balanceCommand(app: App, ctx: Context): Promise<void> {
  const keys = await usableKeys(app.shop, chatIdOf(ctx));
  if (keys.length === 0) return await say(ctx, T.noKeys);
  // Pending settlements first, as the usage report does: every settled request is listed.
  await app.accounts.committer.flush();
  for (const key of keys) {
    const acc = await app.accounts.find(key.id);
    if (!acc) continue;
    const view = await keyView(app.accounts, acc, app.now());
    const msg = new Msg().bold(`Ключ ${key.hint}`).add(` — ${stateText(app, key)}`).nl()
      .add(`Баланс: $${view.balance_usd}`).nl()
      .add(`Удержано открытыми запросами: $${view.held_usd}`);
    const { rows } = await usageRequestsPage(
      app.store,
      key.id,
      { filters: { family: null, endpoint: null }, fromMs: null, toMs: null, limit: LAST_REQUESTS },
      null,
      MAX_SCAN,
    );
    msg.nl().add(rows.length === 0 ? "Запросов пока не было." : "Последние запросы:");
    for (const r of rows) {
      const at = new Date(r.createdAt).toISOString().slice(0, 16).replace("T", " ");
      msg.nl().add(`• ${at} UTC · ${r.model} · ${usd(r.charged)} · ${STATUS[r.status] ?? r.status}`);
    }
    await say(ctx, msg);
  }
}
