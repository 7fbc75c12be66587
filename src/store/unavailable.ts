/**
 * A store the gateway cannot reach (spec §7.2: 503 "temporarily unavailable") as opposed to a bug: the backend
 * tells its outages apart (a refused or dropped connection, a server shutting down), and the server answers
 * them as 503 `service_unavailable` (docs/api.md "Errors"); anything else stays an internal error.
 */
import type { Store } from "./store.ts";

export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "StoreUnavailableError";
  }
}

/** `store` with every rejected call the backend calls an outage turned into a StoreUnavailableError. */
export function guardStore<S extends Store>(store: S, isOutage: (err: unknown) => boolean): S {
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const out = value.apply(target, args);
        return out instanceof Promise
          ? out.catch((err) => {
            throw isOutage(err) ? new StoreUnavailableError(err) : err;
          })
          : out;
      };
    },
  });
}
