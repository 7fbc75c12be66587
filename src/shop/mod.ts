/** The key shop: what the bot, the admin API and the CLI import. */
export { Shop } from "./shop.ts";
export type * from "./types.ts";
