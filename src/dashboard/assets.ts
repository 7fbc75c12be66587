/**
 * GET /dashboard/assets/:name: the dashboard's one stylesheet and one small script, served by the gateway
 * itself (no CDN: the CSP allows only 'self'). Read from beside this file once, on first use.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { RouteContext } from "../request/context.ts";

const ASSETS: Readonly<Record<string, string>> = {
  "dashboard.css": "text/css; charset=utf-8",
  "dashboard.js": "text/javascript; charset=utf-8",
};

const loaded = new Map<string, Promise<Uint8Array>>();

function load(name: string): Promise<Uint8Array> {
  let file = loaded.get(name);
  if (!file) {
    file = Deno.readFile(new URL(`./assets/${name}`, import.meta.url));
    file.catch(() => loaded.delete(name)); // a failed read is tried again next time
    loaded.set(name, file);
  }
  return file;
}

export async function dashboardAsset(_app: App, ctx: RouteContext): Promise<Response> {
  const name = ctx.params.name!;
  const type = Object.hasOwn(ASSETS, name) ? ASSETS[name]! : undefined;
  if (type === undefined) throw new GatewayError("route_not_found");
  return new Response(await load(name) as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": type, "request-id": ctx.requestId, ...ctx.headers },
  });
}
