/**
 * Operator configuration from environment variables, validated once at start-up.
 *
 * Every setting carries its description (`.describe()`), and the settings are grouped by area: both feed
 * the generated reference docs/configuration.md (`deno task config:docs`; `deno task check` fails when it
 * is stale).
 */
import { z } from "zod";
import { DEPLOY_DEFAULTS, deployRefusals, onDenoDeploy } from "./deploy_rules.ts";
import { server } from "./settings/server.ts";
import { store } from "./settings/store.ts";
import { billing } from "./settings/billing.ts";
import { upstreams } from "./settings/upstreams.ts";
import { families } from "./settings/families.ts";
import { filesWeb } from "./settings/files_web.ts";
import { bot } from "./settings/bot.ts";
import { dashboard } from "./settings/dashboard.ts";
import { telemetry } from "./settings/telemetry.ts";

/** The areas in the order docs/configuration.md shows them. */
export const CONFIG_AREAS = [
  {
    title: "Server",
    about: "The listening socket, connection bounds, shutdown, the operator API and request admission.",
    settings: server,
  },
  { title: "Store", about: "Where keys, balances, usage and files are kept.", settings: store },
  {
    title: "Billing and leases",
    about: "Credit leases on a shared store, the durability of settlements, the demo key.",
    settings: billing,
  },
  { title: "Upstreams", about: "The upstream providers and the calls to them.", settings: upstreams },
  { title: "Families", about: "What one family adds to the common path.", settings: families },
  {
    title: "Files and web",
    about: "Family alpha's file store and its search and page fetch helpers.",
    settings: filesWeb,
  },
  { title: "Bot", about: "The key shop's Telegram bot (spec §1.6, §5.5).", settings: bot },
  { title: "Dashboard", about: "The key holder's dashboard at /dashboard.", settings: dashboard },
  {
    title: "Telemetry",
    about: "Logs; /metrics, /healthz and /readyz need no setting of their own.",
    settings: telemetry,
  },
] as const;

export const ConfigSchema = z.object({
  ...server,
  ...store,
  ...billing,
  ...upstreams,
  ...families,
  ...filesWeb,
  ...bot,
  ...dashboard,
  ...telemetry,
}).refine((c) => !c.TELEGRAM_WEBHOOK_SECRET || c.PUBLIC_BASE_URL, {
  // Telegram has to be told where to post: the bot registers PUBLIC_BASE_URL/telegram/<hook> itself.
  path: ["PUBLIC_BASE_URL"],
  message: "TELEGRAM_WEBHOOK_SECRET (webhook mode) needs PUBLIC_BASE_URL",
});

export type Config = z.infer<typeof ConfigSchema>;

export const UPSTREAM_URL_VARS = [
  "ALPHA_UPSTREAM_URL",
  "BETA_UPSTREAM_URL",
  "DELTA_UPSTREAM_URL",
  "THETA_UPSTREAM_URL",
] as const;

/** Parse a variable map (Deno.env.toObject() in production); throws a readable Error on bad values. */
export function parseConfig(vars: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== undefined && v !== ""));
  const deploy = onDenoDeploy(cleaned);
  const result = ConfigSchema.safeParse(deploy ? { ...DEPLOY_DEFAULTS, ...cleaned } : cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  // What cannot work on Deno Deploy is refused like a bad value (src/config/deploy_rules.ts).
  const refusals = deploy ? deployRefusals(result.data) : [];
  if (refusals.length > 0) {
    throw new Error(`invalid configuration on Deno Deploy:\n${refusals.map((r) => `  ${r}`).join("\n")}`);
  }
  return result.data;
}

/** Demo mode: no upstream configured at all, every family served by the built-in simulator. */
export function isDemoMode(config: Config): boolean {
  return UPSTREAM_URL_VARS.every((k) => config[k] === undefined);
}
