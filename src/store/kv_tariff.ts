/** The live tariff on Deno KV (store.ts TariffStore): every rate row in one value. */
import type { TariffRow } from "../catalog/tariff_seed.ts";
import type { TariffStore } from "./store.ts";
import { kvKeys } from "./kv_keys.ts";

export class KvTariff implements TariffStore {
  constructor(private readonly kv: Deno.Kv) {}

  async getTariff(): Promise<TariffRow[] | null> {
    return (await this.kv.get<TariffRow[]>(kvKeys.tariff())).value;
  }

  async putTariff(rows: TariffRow[]): Promise<void> {
    await this.kv.set(kvKeys.tariff(), rows);
  }
}
