/**
 * Reads a backup file (records.ts) back as records, checking everything before a restore writes anything:
 * the header's format and version (a newer version is refused by name), every record against its schema,
 * the references between records, and the trailer's count and SHA-256 of every byte before it. A file cut
 * short has no trailer; a changed byte changes the checksum. `verifyBackup` reads it whole and writes nothing;
 * `readBackup` yields the records of a file `verifyBackup` accepted (reading it again, and checking it again).
 */
import { createHash } from "node:crypto";
import {
  BACKUP_FORMAT,
  BACKUP_VERSION,
  type BackupHeader,
  type BackupRecord,
  headerSchema,
  recordSchema,
  trailerSchema,
} from "./records.ts";
import { concatBytes } from "../util/bytes.ts";

/** The longest line read (a file's bytes in base64 are its longest). */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

export class BackupFileError extends Error {
  override name = "BackupFileError";
}

export interface BackupSummary {
  header: BackupHeader;
  /** Records by type. */
  counts: Record<string, number>;
}

/** Reads the whole file and checks it; throws BackupFileError naming the first problem. */
export async function verifyBackup(file: ReadableStream<Uint8Array>): Promise<BackupSummary> {
  const counts: Record<string, number> = {};
  const records = readBackup(file);
  for (let next = await records.next();; next = await records.next()) {
    if (next.done) return { header: next.value, counts };
    counts[next.value.t] = (counts[next.value.t] ?? 0) + 1;
  }
}

/**
 * Yields the file's records in order, each checked, and returns its header; throws BackupFileError at the
 * first problem — after the records before it, so a restore reads the file with verifyBackup first.
 */
export async function* readBackup(
  file: ReadableStream<Uint8Array>,
): AsyncGenerator<BackupRecord, BackupHeader> {
  const hash = createHash("sha256");
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const refs = new References();
  let header: BackupHeader | null = null;
  let records = 0;
  let ended = false;
  let lineNo = 0;
  for await (const line of lines(file)) {
    lineNo++;
    if (ended) throw new BackupFileError(`line ${lineNo}: data after the trailer`);
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(line));
    } catch {
      throw new BackupFileError(`line ${lineNo}: not a JSON line (a truncated or damaged file)`);
    }
    if (header === null) {
      header = checkHeader(value);
      hash.update(line);
      continue;
    }
    if ((value as { t?: unknown })?.t === "end") {
      const trailer = trailerSchema.safeParse(value);
      if (!trailer.success) throw new BackupFileError(`line ${lineNo}: a damaged trailer`);
      if (trailer.data.records !== records) {
        throw new BackupFileError(
          `the trailer counts ${trailer.data.records} records, the file has ${records}`,
        );
      }
      if (trailer.data.sha256 !== hash.digest("hex")) {
        throw new BackupFileError("checksum mismatch: the file was changed after it was written");
      }
      ended = true;
      continue;
    }
    const rec = recordSchema.safeParse(value);
    if (!rec.success) {
      throw new BackupFileError(
        `line ${lineNo}: not a valid record (${rec.error.issues[0]?.message ?? "?"})`,
      );
    }
    refs.check(rec.data, lineNo);
    hash.update(line);
    records++;
    yield rec.data;
  }
  if (header === null) throw new BackupFileError("an empty file, not a gateway backup");
  if (!ended) {
    throw new BackupFileError("no trailer: the file is truncated (a backup cut short or copied in part)");
  }
  return header;
}

function checkHeader(value: unknown): BackupHeader {
  const v = value as { format?: unknown; version?: unknown };
  if (v?.format !== BACKUP_FORMAT) throw new BackupFileError("not a gateway backup (no header on line 1)");
  if (typeof v.version === "number" && v.version > BACKUP_VERSION) {
    throw new BackupFileError(
      `backup format version ${v.version} was written by a newer gateway; this build reads versions up to ` +
        `${BACKUP_VERSION}. Restore it with the newer gateway.`,
    );
  }
  const header = headerSchema.safeParse(value);
  if (!header.success) throw new BackupFileError("line 1: a damaged header");
  return header.data;
}

/** Keys are unique and come before what refers to them; ids of files, payments and packages are unique. */
class References {
  readonly #keys = new Set<string>();
  readonly #ids = new Set<string>();

  check(rec: BackupRecord, lineNo: number): void {
    const unique = (kind: string, id: string) => {
      if (this.#ids.has(`${kind}:${id}`)) throw new BackupFileError(`line ${lineNo}: ${kind} ${id} twice`);
      this.#ids.add(`${kind}:${id}`);
    };
    switch (rec.t) {
      case "key":
        unique("key", rec.id);
        this.#keys.add(rec.id);
        return;
      case "ledger":
      case "owner":
      case "usage":
      case "usage_hour":
      case "file":
        if (!this.#keys.has(rec.keyId)) {
          throw new BackupFileError(`line ${lineNo}: a ${rec.t} record of key ${rec.keyId} before its key`);
        }
        if (rec.t === "file") unique("file", rec.id);
        if (rec.t === "owner") unique("owner", rec.keyId);
        return;
      case "payment":
        unique("payment", rec.id);
        return;
      case "package":
        unique("package", rec.id);
        return;
      case "payment_method":
        unique("payment_method", rec.id);
        return;
      case "tariff":
        unique("tariff", "");
        return;
    }
  }
}

/** The file's lines without their "\n", each at most MAX_LINE_BYTES; the last must end with "\n". */
async function* lines(file: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of file) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, nl + 1));
      yield concatBytes(parts); // the trailing "\n" kept: it is hashed
      [parts, size, start] = [[], 0, nl + 1];
    }
    if (start < chunk.length) {
      size += chunk.length - start;
      if (size > MAX_LINE_BYTES) throw new BackupFileError(`a line longer than ${MAX_LINE_BYTES} bytes`);
      parts.push(chunk.slice(start));
    }
  }
  if (size > 0) throw new BackupFileError("no trailer: the file is truncated (its last line is cut)");
}
