/** The start of /caps, /theta, /alerts: the chat's one key straight away, or a choice between several. */
import type { Context } from "grammy";
import type { App } from "../../app.ts";
import type { KeyRecord } from "../../store/types.ts";
import type { Callback } from "../callback_data.ts";
import { keyButtons, usableKeys } from "../chat_keys.ts";
import { chatIdOf, say } from "../reply.ts";
import { T } from "../texts.ts";

export async function pickKey(
  app: App,
  ctx: Context,
  choice: (keyId: string) => Callback,
  show: (key: KeyRecord) => Promise<void>,
): Promise<void> {
  const keys = await usableKeys(app.shop, chatIdOf(ctx));
  if (keys.length === 0) return await say(ctx, T.noKeys);
  if (keys.length === 1) return await show(keys[0]!);
  await say(ctx, T.chooseKey, keyButtons(keys, choice));
}
