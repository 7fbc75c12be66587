/** The live tariff on Postgres (store.ts TariffStore): every rate row in the one row of `tariff`. */
import type postgres from "postgres";
import type { TariffRow } from "../catalog/tariff_seed.ts";
import type { TariffStore } from "./store.ts";
import type { Sql } from "./pg_connect.ts";

export class PgTariff implements TariffStore {
  constructor(private readonly sql: Sql) {}

  async getTariff(): Promise<TariffRow[] | null> {
    const [row] = await this.sql`SELECT rows FROM tariff`;
    return row ? row.rows as TariffRow[] : null;
  }

  async putTariff(rows: TariffRow[]): Promise<void> {
    await this.sql`
      INSERT INTO tariff (rows) VALUES (${this.sql.json(rows as unknown as postgres.JSONValue)})
      ON CONFLICT (singleton) DO UPDATE SET rows = EXCLUDED.rows`;
  }
}
