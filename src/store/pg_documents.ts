/**
 * Shared documents on Postgres (store.ts SharedDocuments): a document in its row of `shared_documents`
 * (migration 11, pg_migrations.ts), changed under the row's lock, each change announced by NOTIFY on a
 * channel of the document and the store's own schema.
 */
import type { Sql } from "./pg_connect.ts";
import { STORE_LOCK_ID } from "./pg_connect.ts";
import { checkName, encodeDocument } from "./json_document.ts";
import type { JsonDocument, SharedDocuments } from "./store.ts";
import type { Logger } from "../util/log.ts";

/** The suffix of the store's NOTIFY channels: one per schema (channels are per database, and stores of several
 *  schemas may share one), named after the schema as the migration lock is (pg_connect.ts). */
export async function schemaTag(sql: Sql): Promise<string> {
  const [row] = await sql.unsafe(`SELECT ${STORE_LOCK_ID} AS id`);
  return ((row!.id as number) >>> 0).toString(16);
}

export class PgDocuments implements SharedDocuments {
  /** `tag`: schemaTag's, the suffix of every document's channel. */
  constructor(private readonly sql: Sql, private readonly tag: string, private readonly log: Logger) {}

  /** A document's NOTIFY channel. */
  #channel(name: string): string {
    return `${checkName(name)}_${this.tag}`;
  }

  /** One transaction: the row locked (created first when missing), `change` run (a throw rolls back), the
   *  document written and the change announced — listeners hear it at the commit, never before. */
  updateDocument<T>(
    name: string,
    change: (doc: JsonDocument | null) => { doc: JsonDocument | null; result: T },
  ): Promise<T> {
    let channel: string;
    try {
      channel = this.#channel(name);
    } catch (err) {
      return Promise.reject(err); // a bad name rejects, as every failure here does
    }
    return this.sql.begin(async (tx) => {
      let [row] = await tx`SELECT doc FROM shared_documents WHERE name = ${name} FOR UPDATE`;
      if (!row) {
        // A no-op upsert returns the row locked, whichever transaction created it.
        [row] = await tx`
          INSERT INTO shared_documents (name, doc) VALUES (${name}, NULL)
          ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
          RETURNING doc`;
      }
      const { doc, result } = change(row!.doc as JsonDocument | null);
      if (doc !== null) {
        await tx`
          WITH saved AS (
            UPDATE shared_documents SET doc = convert_from(${encodeDocument(name, doc)}, 'UTF8')::jsonb
            WHERE name = ${name}
          )
          SELECT pg_notify(${channel}, '')`;
      }
      return result;
    }) as Promise<T>;
  }

  /**
   * LISTEN on the client's own connection for notifications (postgres.js keeps it and listens again after a
   * reconnect). `onChange` is also called each time the listen is (re)established: a change made while no
   * connection listened is then not missed.
   */
  watchDocument(name: string, onChange: () => void): () => void {
    let stopped = false;
    const listening = this.sql.listen(this.#channel(name), () => {
      if (!stopped) onChange();
    }, () => {
      if (!stopped) onChange();
    });
    listening.catch((err) =>
      this.log.error("postgres document LISTEN failed", {
        document: name,
        error: err instanceof Error ? err.message : String(err),
      })
    );
    return () => {
      if (stopped) return;
      stopped = true;
      listening.then((l) => l.unlisten()).catch(() => {}); // failed above, or the store is closed
    };
  }
}
