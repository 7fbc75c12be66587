/** Remote mode: the running gateway's /admin API with Bearer ADMIN_TOKEN. */
import type { KeyAction } from "../../src/accounts/key_operations.ts";
import type { TariffList } from "../../src/billing/tariff_rows.ts";
import { type Backend, type KeyView, OperationError } from "./backend.ts";
import type { ShopCommand } from "./shop_args.ts";

const seg = encodeURIComponent;

/** The admin API route of a key shop command (src/http/routes.ts). */
function shopRoute(cmd: ShopCommand): { method: string; path: string; body?: unknown } {
  const query = (q: Record<string, string>) => Object.keys(q).length ? `?${new URLSearchParams(q)}` : "";
  switch (cmd.kind) {
    case "package-list":
      return { method: "GET", path: "/admin/packages" };
    case "package-create":
      return { method: "POST", path: "/admin/packages", body: cmd.body };
    case "package-set":
      return { method: "PATCH", path: `/admin/packages/${seg(cmd.id)}`, body: cmd.body };
    case "method-list":
      return { method: "GET", path: "/admin/payment-methods" };
    case "method-set":
      return { method: "POST", path: `/admin/payment-methods/${seg(cmd.id)}`, body: cmd.body };
    case "key-find":
      return { method: "GET", path: `/admin/keys${query(cmd.query)}` };
    case "key-ledger":
      return { method: "GET", path: `/admin/keys/${seg(cmd.id)}/ledger` };
    case "payment-list":
      return { method: "GET", path: `/admin/payments${query(cmd.query)}` };
    case "payment-confirm":
      return { method: "POST", path: `/admin/payments/${seg(cmd.id)}/confirm` };
    case "payment-refund":
      return { method: "POST", path: `/admin/payments/${seg(cmd.id)}/refund` };
  }
}

export function remoteBackend(baseUrl: string, token: string): Backend {
  const base = baseUrl.replace(/\/+$/, "");

  async function call<T = KeyView>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new OperationError(
        `Шлюз ${base} недоступен: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const e = json?.error;
      if (e && typeof e.message === "string") {
        const param = typeof e.param === "string" ? ` (param: ${e.param})` : "";
        const action = typeof e.action === "string" ? `\n${e.action}` : "";
        throw new OperationError(`${e.message}${param}${action}`);
      }
      throw new OperationError(`HTTP ${res.status}: ${text.slice(0, 500)}`);
    }
    if (json === null || typeof json !== "object") {
      throw new OperationError(`HTTP ${res.status}: ответ шлюза не является JSON-объектом`);
    }
    return json as T;
  }

  return {
    async create(body) {
      const view = await call("POST", "/admin/keys", body);
      if (typeof view.key !== "string") throw new OperationError("Шлюз не вернул ключ в ответе на создание.");
      return view as KeyView & { key: string };
    },
    show: (id) => call("GET", `/admin/keys/${seg(id)}`),
    action: (id: string, action: KeyAction, body) => call("POST", `/admin/keys/${seg(id)}/${action}`, body),
    tariff: () => call<TariffList>("GET", "/admin/tariff"),
    setTariff: (body) => call<TariffList>("POST", "/admin/tariff", body),
    shop: (cmd) => {
      const r = shopRoute(cmd);
      return call(r.method, r.path, r.body);
    },
    close: () => Promise.resolve(),
  };
}
