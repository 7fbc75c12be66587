/**
 * GET/POST /admin/tariff: the live tariff as data. The store holds the table; a change is validated
 * as a whole, stored, then swapped into `app.tariff` — the next request reserves at the new rates,
 * requests already admitted keep the rates of their Reservation.
 */
import type { App } from "../app.ts";
import { Tariff } from "../billing/tariff.ts";
import { applyTariffChange, reconcileTariff, tariffList } from "../billing/tariff_rows.ts";
import { readJsonObject } from "../request/body.ts";
import { jsonResponse } from "../request/json.ts";
import type { RouteContext } from "../request/context.ts";
import { ADMIN_BODY_LIMIT } from "./api.ts";

const currentRows = async (app: App) => reconcileTariff(await app.store.getTariff()).rows;

export async function adminGetTariff(app: App, ctx: RouteContext): Promise<Response> {
  return jsonResponse(200, tariffList(await currentRows(app)), ctx.requestId);
}

export async function adminSetTariff(app: App, ctx: RouteContext): Promise<Response> {
  const body = await readJsonObject(ctx.req, ADMIN_BODY_LIMIT);
  // One change at a time per gateway (app.tariffChanges): read, merge, store and swap never interleave.
  const rows = await app.tariffChanges.run(async () => {
    const next = applyTariffChange(await currentRows(app), body);
    const tariff = new Tariff(next);
    await app.store.putTariff(next);
    app.tariff = tariff;
    return next;
  });
  return jsonResponse(200, tariffList(rows), ctx.requestId);
}
