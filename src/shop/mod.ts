/** The key shop (issue 20): what the bot, the admin API and the CLI import. */
export { Shop } from "./shop.ts";
export type * from "./types.ts";
