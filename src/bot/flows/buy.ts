/**
 * /buy: a package (buttons "<name> — <price> <currency>"), the key it tops up when the chat has
 * several, then one of the payment methods available now; Stars get an invoice (XTR, payload = the payment
 * id), a manual method its payment details and the payment id to quote.
 */
import { type Context, InlineKeyboard } from "grammy";
import type { App } from "../../app.ts";
import type { Package, PaymentMethod } from "../../shop/mod.ts";
import { encodeCallback } from "../callback_data.ts";
import { keyButtons, ownedKey, usableKeys } from "../chat_keys.ts";
import { Msg } from "../message.ts";
import { answer, chatIdOf, failureText, say } from "../reply.ts";
import { price, T, usd } from "../texts.ts";

/** Telegram Stars are the currency XTR: a Stars invoice can only carry a package priced in XTR. */
const STARS = "XTR";

export async function buyCommand(app: App, ctx: Context): Promise<void> {
  const packages = await app.shop.listPackages({ activeOnly: true });
  if (packages.length === 0) return await say(ctx, T.noPackages);
  const kb = new InlineKeyboard();
  const msg = new Msg().add(T.choosePackage);
  for (const p of packages) {
    kb.text(`${p.name} — ${price(p.price, p.currency)}`, encodeCallback({ a: "pkg", pkg: p.id })).row();
    msg.nl().add(`• ${p.name}: ${usd(p.creditUsd)} на балансе ключа за ${price(p.price, p.currency)}`);
  }
  await say(ctx, msg, kb);
}

async function activePackage(app: App, id: string): Promise<Package | undefined> {
  return (await app.shop.listPackages({ activeOnly: true })).find((p) => p.id === id);
}

/** A package chosen: the key it tops up (asked when the chat has several), then the methods. */
export async function onPackage(app: App, ctx: Context, pkgId: string): Promise<void> {
  const pkg = await activePackage(app, pkgId);
  if (!pkg) return await answer(ctx, "Этот пакет больше не продаётся. Откройте /buy заново.");
  const keys = await usableKeys(app.shop, chatIdOf(ctx));
  if (keys.length > 1) {
    return await answer(
      ctx,
      T.chooseKeyToTopUp,
      keyButtons(keys, (key) => ({ a: "pkgkey", pkg: pkg.id, key })),
    );
  }
  await showMethods(app, ctx, pkg, keys[0]?.id ?? null);
}

export async function onPackageKey(app: App, ctx: Context, pkgId: string, keyId: string): Promise<void> {
  const pkg = await activePackage(app, pkgId);
  if (!pkg) return await answer(ctx, "Этот пакет больше не продаётся. Откройте /buy заново.");
  if (!(await ownedKey(app.shop, chatIdOf(ctx), keyId))) return await answer(ctx, T.keyNotFound);
  await showMethods(app, ctx, pkg, keyId);
}

/** The methods available now that can take this package's currency. */
function payableBy(methods: PaymentMethod[], pkg: Package): PaymentMethod[] {
  return methods.filter((m) => m.kind === "manual" || pkg.currency === STARS);
}

async function showMethods(app: App, ctx: Context, pkg: Package, keyId: string | null): Promise<void> {
  const methods = payableBy(await app.shop.listPaymentMethods({ availableOnly: true }), pkg);
  if (methods.length === 0) return await answer(ctx, T.noMethods);
  const kb = new InlineKeyboard();
  for (const m of methods) {
    kb.text(m.title, encodeCallback({ a: "pay", pkg: pkg.id, key: keyId, method: m.id })).row();
  }
  const msg = new Msg().add(`«${pkg.name}»: ${usd(pkg.creditUsd)} за ${price(pkg.price, pkg.currency)}.`).nl()
    .add(T.chooseMethod);
  await answer(ctx, msg, kb);
}

/** A method chosen: the payment is created (the shop re-checks package and method), then paid. */
export async function onPay(
  app: App,
  ctx: Context,
  pkgId: string,
  keyId: string | null,
  methodId: string,
): Promise<void> {
  const chatId = chatIdOf(ctx);
  if (keyId !== null && !(await ownedKey(app.shop, chatId, keyId))) return await answer(ctx, T.keyNotFound);
  const method = (await app.shop.listPaymentMethods({ availableOnly: true })).find((m) => m.id === methodId);
  if (!method) return await answer(ctx, "Этот способ оплаты сейчас недоступен. Откройте /buy заново.");
  let payment;
  try {
    payment = await app.shop.createPayment(chatId, pkgId, methodId, keyId);
  } catch (err) {
    return await answer(ctx, failureText(err));
  }
  const pkgName = (await app.shop.listPackages()).find((p) => p.id === pkgId)?.name ?? pkgId;
  if (method.kind === "stars") {
    await answer(ctx, `«${pkgName}»: счёт на ${price(payment.price, payment.currency)} ниже.`);
    await ctx.api.sendInvoice(
      chatId,
      pkgName,
      `${usd(payment.creditUsd)} на баланс ключа к шлюзу.`,
      payment.id,
      STARS,
      [{ label: pkgName, amount: payment.price }],
    );
    return;
  }
  const msg = new Msg().add(`«${pkgName}»: к оплате ${price(payment.price, payment.currency)}.`).nl()
    .add(method.details ? `Реквизиты: ${method.details}` : "Реквизиты сообщит оператор.").nl()
    .add("Номер платежа: ").code(payment.id).add(" — укажите его в комментарии к переводу.").nl()
    .add("Когда оператор подтвердит перевод, бот напишет сюда.");
  await answer(ctx, msg);
}
