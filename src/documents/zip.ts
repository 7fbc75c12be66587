/**
 * Bounded reading of OOXML containers with @zip.js/zip.js: entry count, declared and ACTUAL inflated
 * sizes are capped (the actual size is counted while inflating, so a lying header does not help a zip
 * bomb), and only the named XML parts are ever read (nested archives are never opened).
 */
import { configure, type Entry, type FileEntry, Uint8ArrayReader, ZipReader } from "@zip.js/zip.js";
import { FILE_LIMITS } from "./limits.ts";
import { overLimit, unreadable } from "./errors.ts";

configure({ useWebWorkers: false });

export class Ooxml {
  #entries = new Map<string, FileEntry>();
  #inflated = 0;

  private constructor(private readonly reader: ZipReader<Uint8Array>) {}

  static async open(bytes: Uint8Array): Promise<Ooxml> {
    if (!(bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04)) {
      throw unreadable("Файл не является ZIP-контейнером Office Open XML.");
    }
    const reader = new ZipReader(new Uint8ArrayReader(bytes));
    const doc = new Ooxml(reader);
    let count = 0;
    try {
      for await (const e of reader.getEntriesGenerator() as AsyncGenerator<Entry>) {
        if (++count > FILE_LIMITS.maxZipEntries) {
          throw overLimit(`В архиве больше ${FILE_LIMITS.maxZipEntries} элементов.`);
        }
        if (!e.directory) doc.#entries.set(e.filename.replace(/^\/+/, ""), e as FileEntry);
      }
    } catch (err) {
      if (err instanceof Error && err.name === "GatewayError") throw err;
      throw unreadable("Архив документа повреждён.");
    }
    return doc;
  }

  has(path: string): boolean {
    return this.#entries.has(path);
  }

  /**
   * Streams one part as text chunks into `onText`. Throws file_limit_exceeded as soon as the inflated
   * size passes the per-entry or per-container bound.
   */
  async readText(path: string, onText: (chunk: string) => void): Promise<void> {
    const entry = this.#entries.get(path);
    if (!entry) throw unreadable(`В документе нет части ${path}.`);
    if (entry.uncompressedSize > FILE_LIMITS.maxZipEntryBytes) {
      throw overLimit(`Часть ${path} после распаковки больше ${FILE_LIMITS.maxZipEntryBytes} байт.`);
    }
    let entryBytes = 0;
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let failure: unknown;
    const sink = new WritableStream<Uint8Array>({
      write: (chunk) => {
        entryBytes += chunk.byteLength;
        this.#inflated += chunk.byteLength;
        if (entryBytes > FILE_LIMITS.maxZipEntryBytes) {
          failure = overLimit(`Часть ${path} после распаковки больше ${FILE_LIMITS.maxZipEntryBytes} байт.`);
        } else if (this.#inflated > FILE_LIMITS.maxZipTotalBytes) {
          failure = overLimit(`Документ после распаковки больше ${FILE_LIMITS.maxZipTotalBytes} байт.`);
        }
        if (failure) throw failure;
        let text: string;
        try {
          text = decoder.decode(chunk, { stream: true });
        } catch {
          throw failure = unreadable(`Часть ${path} не в кодировке UTF-8.`);
        }
        try {
          onText(text);
        } catch (err) {
          throw failure = err;
        }
      },
    });
    try {
      await entry.getData(sink);
    } catch {
      if (failure) throw failure;
      throw unreadable(`Часть ${path} повреждена.`);
    }
    if (failure) throw failure;
  }

  async close(): Promise<void> {
    await this.reader.close().catch(() => {});
  }
}
