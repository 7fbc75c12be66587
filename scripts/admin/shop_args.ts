/** The key shop's CLI commands: argv → one command with the admin API's JSON body or query. */
import { UsageError } from "./usage_error.ts";

export type ShopCommand =
  | { kind: "package-list" }
  | { kind: "package-create"; body: Record<string, unknown> }
  | { kind: "package-set"; id: string; body: Record<string, unknown> }
  | { kind: "method-list" }
  | { kind: "method-set"; id: string; body: Record<string, unknown> }
  | { kind: "key-find"; query: Record<string, string> }
  | { kind: "key-ledger"; id: string }
  | { kind: "payment-list"; query: Record<string, string> }
  | { kind: "payment-confirm"; id: string }
  | { kind: "payment-refund"; id: string };

export const SHOP_USAGE = `
  package list                           print the packages
  package create --name <name> --credit <usd> --price <n> --currency <XTR|…> [--active yes|no]
                                         add a package: <usd> of credit for <n> of the currency's smallest
                                         unit (XTR: Telegram Stars)
  package set <id> [--name N] [--credit USD] [--price N] [--currency C] [--active yes|no]
                                         change a package (a payment keeps the credit and price of its checkout)
  method list                            print the payment methods
  method set <id> [on|off] [--details <text>|none] [--title <text>]
                                         switch a payment method on or off, set the manual method's details
  key find --chat <chat id> | --hint <hint>
                                         the keys a Telegram chat owns, or those with a hint (support)
  key ledger <id>                        every credit and debit of a key, with its reference
  payment list [--status S] [--chat <chat id>] [--limit N]
                                         payments, newest first (S: pending, credited, refund_due, refunded,
                                         cancelled)
  payment confirm <id>                   confirm a manual payment: credits its key (a first purchase issues
                                         the key: its secret goes to the buyer's chat, or is printed here)
  payment refund <id>                    refund a payment: the key is debited (Stars go back through the bot)`;

/** A command's flags and positionals (args.ts splitFlags), given here to keep one parser. */
type Split = (
  args: string[],
  allowed: readonly string[],
) => { flags: Map<string, string>; positional: string[] };

function one(group: string, sub: string, positional: string[], what: string): string {
  if (positional.length !== 1) {
    throw new UsageError(`${group} ${sub} expects <${what}>, got ${positional.length} argument(s)`);
  }
  return positional[0]!;
}

function none(group: string, sub: string, positional: string[]): void {
  if (positional.length > 0) throw new UsageError(`${group} ${sub} takes no arguments`);
}

/** A whole number for a JSON field, or a usage error naming the flag. */
function whole(flag: string, v: string): number {
  if (!/^\d{1,10}$/.test(v)) throw new UsageError(`--${flag} must be a whole number, got "${v}"`);
  return Number(v);
}

function yesNo(v: string): boolean {
  if (v !== "yes" && v !== "no") throw new UsageError(`--active must be yes or no, got "${v}"`);
  return v === "yes";
}

export function parsePackage(sub: string | undefined, rest: string[], split: Split): ShopCommand {
  if (sub === "list") {
    none("package", sub, split(rest, []).positional);
    return { kind: "package-list" };
  }
  if (sub === "create") {
    const { flags, positional } = split(rest, ["name", "credit", "price", "currency", "active"]);
    none("package", sub, positional);
    for (const f of ["name", "credit", "price", "currency"]) {
      if (!flags.has(f)) throw new UsageError(`package create: --${f} is required`);
    }
    const body: Record<string, unknown> = {
      name: flags.get("name"),
      credit_usd: flags.get("credit"),
      price: whole("price", flags.get("price")!),
      currency: flags.get("currency"),
    };
    if (flags.has("active")) body.active = yesNo(flags.get("active")!);
    return { kind: "package-create", body };
  }
  if (sub === "set") {
    const { flags, positional } = split(rest, ["name", "credit", "price", "currency", "active"]);
    const id = one("package", sub, positional, "id");
    if (flags.size === 0) {
      throw new UsageError("package set: give at least one of --name, --credit, --price, …");
    }
    const body: Record<string, unknown> = {};
    if (flags.has("name")) body.name = flags.get("name");
    if (flags.has("credit")) body.credit_usd = flags.get("credit");
    if (flags.has("price")) body.price = whole("price", flags.get("price")!);
    if (flags.has("currency")) body.currency = flags.get("currency");
    if (flags.has("active")) body.active = yesNo(flags.get("active")!);
    return { kind: "package-set", id, body };
  }
  throw new UsageError(
    sub === undefined ? "package: missing subcommand" : `unknown command "package ${sub}"`,
  );
}

export function parseMethod(sub: string | undefined, rest: string[], split: Split): ShopCommand {
  if (sub === "list") {
    none("method", sub, split(rest, []).positional);
    return { kind: "method-list" };
  }
  if (sub !== "set") {
    throw new UsageError(
      sub === undefined ? "method: missing subcommand" : `unknown command "method ${sub}"`,
    );
  }
  const { flags, positional } = split(rest, ["details", "title"]);
  if (positional.length < 1 || positional.length > 2) {
    throw new UsageError(`method set expects <id> [on|off], got ${positional.length} argument(s)`);
  }
  const [id, state] = positional;
  const body: Record<string, unknown> = {};
  if (state !== undefined) {
    if (state !== "on" && state !== "off") {
      throw new UsageError(`method state must be on or off, got "${state}"`);
    }
    body.available = state === "on";
  }
  if (flags.has("details")) body.details = flags.get("details") === "none" ? null : flags.get("details");
  if (flags.has("title")) body.title = flags.get("title");
  if (Object.keys(body).length === 0) throw new UsageError("method set: give on|off, --details or --title");
  return { kind: "method-set", id: id!, body };
}

/** `key find` and `key ledger`. */
export function parseShopKey(sub: string, rest: string[], split: Split): ShopCommand | undefined {
  if (sub === "find") {
    const { flags, positional } = split(rest, ["chat", "hint"]);
    none("key", sub, positional);
    if (flags.size !== 1) throw new UsageError("key find: give --chat <chat id> or --hint <hint>");
    return {
      kind: "key-find",
      query: flags.has("chat") ? { chat_id: flags.get("chat")! } : { hint: flags.get("hint")! },
    };
  }
  if (sub === "ledger") return { kind: "key-ledger", id: one("key", sub, split(rest, []).positional, "id") };
  return undefined;
}

export function parsePayment(sub: string | undefined, rest: string[], split: Split): ShopCommand {
  if (sub === "list") {
    const { flags, positional } = split(rest, ["status", "chat", "limit"]);
    none("payment", sub, positional);
    const query: Record<string, string> = {};
    if (flags.has("status")) query.status = flags.get("status")!;
    if (flags.has("chat")) query.chat_id = flags.get("chat")!;
    if (flags.has("limit")) query.limit = flags.get("limit")!;
    return { kind: "payment-list", query };
  }
  if (sub === "confirm" || sub === "refund") {
    const id = one("payment", sub, split(rest, []).positional, "id");
    return { kind: sub === "confirm" ? "payment-confirm" : "payment-refund", id };
  }
  throw new UsageError(
    sub === undefined ? "payment: missing subcommand" : `unknown command "payment ${sub}"`,
  );
}
