/** Remote mode: the running gateway's /admin API with Bearer ADMIN_TOKEN. */
import type { KeyAction } from "../../src/accounts/key_operations.ts";
import type { TariffList } from "../../src/billing/tariff_rows.ts";
import { type Backend, type KeyView, OperationError } from "./backend.ts";

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

  const seg = encodeURIComponent;
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
    close: () => Promise.resolve(),
  };
}
