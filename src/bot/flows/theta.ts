/**
 * /theta (spec §3.2, §5.5): pause or resume family theta for a key (applyKeyAction "theta", as the admin API
 * and the dashboard do; a paused key's theta requests get 403 api_key_paused), and its membership.
 */
import { type Context, InlineKeyboard } from "grammy";
import type { App } from "../../app.ts";
import { applyKeyAction, keyView } from "../../accounts/key_operations.ts";
import type { KeyRecord } from "../../store/types.ts";
import { encodeCallback } from "../callback_data.ts";
import { ownedKey } from "../chat_keys.ts";
import { Msg } from "../message.ts";
import { answer, chatIdOf, say } from "../reply.ts";
import { T } from "../texts.ts";
import { pickKey } from "./pick_key.ts";

export async function thetaCommand(app: App, ctx: Context): Promise<void> {
  await pickKey(app, ctx, (key) => ({ a: "theta", key }), (k) => showTheta(app, ctx, k));
}

export async function thetaOf(app: App, ctx: Context, keyId: string): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await showTheta(app, ctx, key);
}

async function showTheta(app: App, ctx: Context, key: KeyRecord): Promise<void> {
  const acc = await app.accounts.find(key.id);
  if (!acc) return await say(ctx, T.keyNotFound);
  const view = await keyView(app.accounts, acc, app.now());
  const paused = view.theta.paused;
  const msg = new Msg().add(`Ключ ${key.hint}:`).nl()
    .add(`• theta: ${paused ? "приостановлена (запросы получают 403 api_key_paused)" : "работает"}`).nl()
    .add(`• членство: ${view.membership === "private" ? "private" : "нет"}`);
  const kb = new InlineKeyboard().text(
    paused ? "Возобновить theta" : "Приостановить theta",
    encodeCallback({ a: "theta_set", key: key.id, paused: !paused }),
  );
  await say(ctx, msg, kb);
}

export async function thetaSet(app: App, ctx: Context, keyId: string, paused: boolean): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await applyKeyAction(app.accounts, key.id, "theta", { paused }, app.now());
  await answer(
    ctx,
    paused ? `Theta для ${key.hint} приостановлена.` : `Theta для ${key.hint} снова работает.`,
  );
}
