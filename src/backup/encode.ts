/** Writes the backup file's lines (records.ts): the header, the records, then the trailer with the count and
 *  the SHA-256 of every byte before it. */
import { createHash } from "node:crypto";
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupHeader, type BackupRecord } from "./records.ts";

const bigintAsText = (_key: string, v: unknown) => typeof v === "bigint" ? v.toString() : v;

export class BackupEncoder {
  readonly #hash = createHash("sha256");
  readonly #utf8 = new TextEncoder();
  #records = 0;

  header(source: BackupHeader["source"], createdAt: number): Uint8Array {
    return this.#line({
      t: "header",
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      created_at: createdAt,
      source,
    });
  }

  record(rec: BackupRecord): Uint8Array {
    this.#records++;
    return this.#line(rec);
  }

  /** The last line; nothing may follow it. */
  trailer(): Uint8Array {
    const line = { t: "end", records: this.#records, sha256: this.#hash.digest("hex") };
    return this.#utf8.encode(JSON.stringify(line) + "\n");
  }

  #line(value: unknown): Uint8Array {
    const bytes = this.#utf8.encode(JSON.stringify(value, bigintAsText) + "\n");
    this.#hash.update(bytes);
    return bytes;
  }
}
