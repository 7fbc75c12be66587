/** Hand-written argument parsing for the admin CLI: argv → one command with the JSON body of src/accounts/key_operations.ts
 *  (the key shop's commands: shop_args.ts). */
import type { KeyAction } from "../../src/accounts/key_operations.ts";
import {
  parseMethod,
  parsePackage,
  parsePayment,
  parseShopKey,
  SHOP_USAGE,
  type ShopCommand,
} from "./shop_args.ts";
import { UsageError } from "./usage_error.ts";
import type { BaseRates } from "./tariff.ts";

export type Command =
  | { kind: "help" }
  | { kind: "create"; body: Record<string, unknown> }
  | { kind: "show"; id: string }
  | { kind: "action"; id: string; action: KeyAction; body: Record<string, unknown> }
  | { kind: "tariff-show" }
  | { kind: "tariff-set"; model: string; base: BaseRates }
  | { kind: "backup"; out: string }
  | { kind: "restore"; file: string }
  | ShopCommand;

export { UsageError };

export const USAGE = `Usage: deno task admin <command>

  key create --balance <usd> [--name <name>] [--membership private|none]
                                         create a key; prints its record, then the key alone on the last line
  key show <id>                          print a key's record
  key topup <id> <amount_usd>            add credit, e.g. 10.00
  key revoke <id>                        revoke a key for good
  key expire <id> <iso-time>             set the expiry time, e.g. 2030-01-01T00:00:00Z
  key suspend <id> <iso-time>|none       suspend the key until the given time; "none" lifts a suspension
  key theta <id> [paused|resumed] [--hourly-requests N|none] [--daily-requests N|none]
                                         pause or resume the theta family for the key, and set its
                                         own theta request limits per UTC hour and day ("none": no limit)
  key membership <id> private|none       set or clear the membership
  key caps <id> [--hourly-spend X|none] [--daily-spend X|none] [--hourly-reserve X|none] [--daily-reserve X|none]
                                         set caps in USD; "none" removes a cap
  tariff show                            print the live tariff (USD per 1M tokens)
  tariff set <model> --input <usd> --output <usd> [--cache-read <usd>|none]
                                         set the model's base rates; its tiers and search fee are kept,
                                         and so is its cache-read rate unless --cache-read is given
                                         ("none": cache reads are charged as input)${SHOP_USAGE}
  backup --out <file>                    take a consistent backup from the running gateway (remote mode
                                         only); the file is checked whole before it is named <file>
  restore --in <file>                    check the backup whole, then write it into the configured store,
                                         which must be empty (direct mode only; docs/backup.md)
  help                                   this text

Mode: with GATEWAY_URL and ADMIN_TOKEN set, the CLI calls the running gateway's /admin API.
Otherwise it opens the configured store directly: the KV file under DATA_DIR is refused while a
gateway runs on it (the gateway is its single writer); a shared store (DATABASE_URL=postgres://…
or kv:…) is used beside the running gateways.`;

const THETA_FLAGS = { "hourly-requests": "hourly_requests", "daily-requests": "daily_requests" } as const;

const CAP_FLAGS = {
  "hourly-spend": "hourly_spend_usd",
  "daily-spend": "daily_spend_usd",
  "hourly-reserve": "hourly_reserve_usd",
  "daily-reserve": "daily_reserve_usd",
} as const;

/** Splits `--flag value` / `--flag=value` pairs from positionals; every flag takes one value. */
function splitFlags(args: string[], allowed: readonly string[]) {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith("--")) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (!allowed.includes(name)) throw new UsageError(`unknown option --${name}`);
    if (flags.has(name)) throw new UsageError(`option --${name} given twice`);
    let value: string | undefined;
    if (eq >= 0) value = a.slice(eq + 1);
    else value = args[++i];
    if (value === undefined) throw new UsageError(`option --${name} needs a value`);
    flags.set(name, value);
  }
  return { flags, positional };
}

function parseBackup(group: "backup" | "restore", args: string[]): Command {
  const flag = group === "backup" ? "out" : "in";
  const { flags, positional } = splitFlags(args, [flag]);
  if (positional.length > 0) throw new UsageError(`${group}: unexpected argument "${positional[0]}"`);
  const file = flags.get(flag);
  if (file === undefined) throw new UsageError(`${group}: --${flag} <file> is required`);
  return group === "backup" ? { kind: "backup", out: file } : { kind: "restore", file };
}

function expectArgs(sub: string, positional: string[], names: string[], group = "key"): string[] {
  if (positional.length !== names.length) {
    const want = names.map((n) => `<${n}>`).join(" ");
    throw new UsageError(`${group} ${sub} expects ${want}, got ${positional.length} argument(s)`);
  }
  return positional;
}

function oneOf(what: string, value: string, options: Record<string, unknown>): unknown {
  if (!Object.hasOwn(options, value)) {
    throw new UsageError(`${what} must be one of ${Object.keys(options).join(", ")}, got "${value}"`);
  }
  return options[value];
}

export function parseArgs(argv: string[]): Command {
  const [group, sub, ...rest] = argv;
  if (group === undefined || group === "help" || group === "--help" || group === "-h") {
    return { kind: "help" };
  }
  if (group === "tariff") return parseTariff(sub, rest);
  if (group === "backup" || group === "restore") return parseBackup(group, argv.slice(1));
  if (group === "package") return parsePackage(sub, rest, splitFlags);
  if (group === "method") return parseMethod(sub, rest, splitFlags);
  if (group === "payment") return parsePayment(sub, rest, splitFlags);
  if (group !== "key") throw new UsageError(`unknown command "${group}"`);
  if (sub === undefined) throw new UsageError("key: missing subcommand");
  const shop = parseShopKey(sub, rest, splitFlags);
  if (shop) return shop;

  if (sub === "create") {
    const { flags, positional } = splitFlags(rest, ["balance", "name", "membership"]);
    expectArgs(sub, positional, []);
    const balance = flags.get("balance");
    if (balance === undefined) throw new UsageError("key create: --balance is required");
    const body: Record<string, unknown> = { balance_usd: balance };
    if (flags.has("name")) body.name = flags.get("name");
    if (flags.has("membership")) {
      body.membership = oneOf("--membership", flags.get("membership")!, { private: "private", none: null });
    }
    return { kind: "create", body };
  }

  if (sub === "caps") {
    const { flags, positional } = splitFlags(rest, Object.keys(CAP_FLAGS));
    const [id] = expectArgs(sub, positional, ["id"]);
    if (flags.size === 0) {
      throw new UsageError("key caps: give at least one of --hourly-spend, --daily-spend, ...");
    }
    const body: Record<string, unknown> = {};
    for (const [flag, field] of Object.entries(CAP_FLAGS)) {
      const v = flags.get(flag);
      if (v !== undefined) body[field] = v === "none" ? null : v;
    }
    return { kind: "action", id: id!, action: "caps", body };
  }

  if (sub === "theta") {
    const { flags, positional } = splitFlags(rest, Object.keys(THETA_FLAGS));
    if (positional.length < 1 || positional.length > 2) {
      throw new UsageError(`key theta expects <id> [paused|resumed], got ${positional.length} argument(s)`);
    }
    const [id, state] = positional;
    if (state === undefined && flags.size === 0) {
      throw new UsageError("key theta: give paused|resumed, --hourly-requests or --daily-requests");
    }
    const body: Record<string, unknown> = {};
    if (state !== undefined) body.paused = oneOf("theta state", state, { paused: true, resumed: false });
    for (const [flag, field] of Object.entries(THETA_FLAGS)) {
      const v = flags.get(flag);
      if (v === undefined) continue;
      if (v !== "none" && !/^\d{1,10}$/.test(v)) {
        throw new UsageError(`--${flag} must be a whole number of requests or none, got "${v}"`);
      }
      body[field] = v === "none" ? null : Number(v);
    }
    return { kind: "action", id: id!, action: "theta", body };
  }

  const { positional } = splitFlags(rest, []);
  switch (sub) {
    case "show":
      return { kind: "show", id: expectArgs(sub, positional, ["id"])[0]! };
    case "revoke":
      return { kind: "action", id: expectArgs(sub, positional, ["id"])[0]!, action: "revoke", body: {} };
    case "topup": {
      const [id, amount] = expectArgs(sub, positional, ["id", "amount_usd"]);
      return { kind: "action", id: id!, action: "topup", body: { amount_usd: amount } };
    }
    case "expire": {
      const [id, at] = expectArgs(sub, positional, ["id", "iso-time"]);
      return { kind: "action", id: id!, action: "expire", body: { at } };
    }
    case "suspend": {
      const [id, until] = expectArgs(sub, positional, ["id", "iso-time|none"]);
      return { kind: "action", id: id!, action: "suspend", body: { until: until === "none" ? null : until } };
    }
    case "membership": {
      const [id, m] = expectArgs(sub, positional, ["id", "private|none"]);
      const membership = oneOf("membership", m!, { private: "private", none: null });
      return { kind: "action", id: id!, action: "membership", body: { membership } };
    }
    default:
      throw new UsageError(`unknown command "key ${sub}"`);
  }
}

function parseTariff(sub: string | undefined, rest: string[]): Command {
  if (sub === "show") {
    expectArgs(sub, splitFlags(rest, []).positional, [], "tariff");
    return { kind: "tariff-show" };
  }
  if (sub !== "set") {
    throw new UsageError(
      sub === undefined ? "tariff: missing subcommand" : `unknown command "tariff ${sub}"`,
    );
  }
  const { flags, positional } = splitFlags(rest, ["input", "output", "cache-read"]);
  const [model] = expectArgs(sub, positional, ["model"], "tariff");
  const input = flags.get("input");
  const output = flags.get("output");
  if (input === undefined || output === undefined) {
    throw new UsageError("tariff set: --input and --output are required");
  }
  const base: BaseRates = { input, output };
  const cache = flags.get("cache-read");
  if (cache !== undefined) base.cacheRead = cache === "none" ? null : cache;
  return { kind: "tariff-set", model: model!, base };
}
