/** The shop's rules for what an operator or the bot gives it, as 400 invalid_request with the field named. */
import { GatewayError } from "../errors/gateway_error.ts";
import type { PackagePatch } from "../store/shop_types.ts";

/** 10^15 USD in pico-USD: the largest amount the admin API's USD strings carry (key_operations.ts). */
const MAX_USD = 10n ** 27n;

function refuse(param: string, detail: string): never {
  throw new GatewayError("invalid_request", { param, detail });
}

/** A package's fields as given (a new package's, or an edit's). */
export function checkPackage(p: PackagePatch): void {
  if (p.name !== undefined && (p.name.trim() === "" || p.name.length > 64)) {
    refuse("name", "от 1 до 64 символов");
  }
  if (p.creditUsd !== undefined && (p.creditUsd <= 0n || p.creditUsd >= MAX_USD)) {
    refuse("credit_usd", "больше 0 USD");
  }
  if (p.price !== undefined && (!Number.isSafeInteger(p.price) || p.price < 1 || p.price > 1_000_000_000)) {
    refuse("price", "целое число наименьших единиц валюты, от 1 до 1000000000");
  }
  if (p.currency !== undefined && !/^[A-Z]{3}$/.test(p.currency)) {
    refuse("currency", "три заглавные латинские буквы, например XTR (звёзды Telegram)");
  }
}

/** An alert threshold: null (the default) or a USD amount ≥ 0. */
export function checkThreshold(usd: bigint | null): void {
  if (usd !== null && (usd < 0n || usd >= MAX_USD)) refuse("threshold_usd", "0 USD или больше");
}
