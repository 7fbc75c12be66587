/** The file store of family alpha (spec §2.2, §3.1, §4.3): upload, list, read, delete for one key. */
import type { Account } from "../accounts/accounts.ts";
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { FileSection, StoredFile } from "../store/store.ts";
import { concatBytes } from "../util/bytes.ts";
import { CONTENT_TYPES, FILE_LIMITS } from "../documents/limits.ts";
import type { Upload } from "./multipart.ts";

/** The public record of spec §2.2. */
export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  expires_at: number;
  filename: string;
  purpose: string;
  content_type: string;
}

export function fileObject(f: StoredFile): FileObject {
  const created = Math.floor(f.createdAt / 1000);
  return {
    id: f.id,
    object: "file",
    bytes: f.bytes,
    created_at: created,
    expires_at: created + Math.round((f.expiresAt - f.createdAt) / 1000),
    filename: f.filename,
    purpose: f.purpose,
    content_type: f.contentType,
  };
}

export function newFileId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `file_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The shape newFileId issues; change both together. */
const FILE_ID_RE = /^file_[0-9a-f]{24}$/;

/**
 * Whether `id` has the shape of an id this gateway issues. Checked before any store lookup: an id of
 * another shape was never issued (404), and a long one would exceed the KV key size (a 500 before).
 */
export function isFileId(id: string): boolean {
  return FILE_ID_RE.test(id);
}

/** Extracts, then stores under the key's quota. Nothing is stored when any step fails. */
export async function uploadFile(app: App, account: Account, upload: Upload): Promise<FileObject> {
  const id = newFileId();
  // Bounded by the extraction pool (processes with time and memory limits, a bounded queue): src/documents/mod.ts.
  let sections;
  try {
    sections = await app.documents.sections(id, upload.kind, upload.bytes);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    app.log.error("file extraction failed", {
      kind: upload.kind,
      error: err instanceof Error ? err.stack ?? err.name : String(err),
    });
    throw new GatewayError("file_unreadable");
  }
  // Serialised once: its size counts in the quota and the same bytes are stored.
  const sectionsJson = await serialiseSections(sections);
  const now = app.now();
  const file: StoredFile = {
    id,
    keyId: account.rec.id,
    filename: upload.filename,
    purpose: upload.purpose,
    contentType: CONTENT_TYPES[upload.kind],
    bytes: upload.bytes.byteLength,
    createdAt: now,
    expiresAt: now + app.config.FILES_TTL_MS,
    storedBytes: upload.bytes.byteLength + sectionsJson.byteLength,
  };
  const res = await app.store.putFile(file, upload.bytes, sectionsJson, {
    maxFiles: FILE_LIMITS.quotaFiles,
    maxBytes: FILE_LIMITS.quotaBytes,
  });
  if (res === "quota_exceeded") throw new GatewayError("file_quota_exceeded");
  return fileObject(file);
}

export async function getOwnFile(app: App, account: Account, id: string): Promise<StoredFile> {
  const f = isFileId(id) ? await app.store.getFile(account.rec.id, id, app.now()) : null;
  if (!f) throw new GatewayError("file_not_found", { param: "file_id" });
  return f;
}

const COMMA = new Uint8Array([0x2c]);

/**
 * The JSON of a FileSection[], built one section at a time and yielding to the event loop every few
 * milliseconds: a 10 MiB document's ~14 M characters serialised in one go block the loop for ~150 ms
 * (measured), one section at a time for ~3 ms per step.
 */
async function serialiseSections(sections: FileSection[]): Promise<Uint8Array> {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [enc.encode("[")];
  let since = performance.now();
  for (let i = 0; i < sections.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(enc.encode(JSON.stringify(sections[i])));
    if (performance.now() - since > 8) {
      await new Promise((r) => setTimeout(r, 0));
      since = performance.now();
    }
  }
  parts.push(enc.encode("]"));
  return concatBytes(parts);
}
