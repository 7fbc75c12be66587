/** .txt, .md, .json, .csv: strict UTF-8, then bounded sections `#section=<n>`. */
import { FILE_LIMITS } from "./limits.ts";
import { overLimit, unreadable } from "./errors.ts";
import type { SectionSink } from "./sections.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw unreadable("Текст файла не в кодировке UTF-8.");
  }
}

export function extractText(bytes: Uint8Array, kind: "txt" | "md" | "json" | "csv", sink: SectionSink): void {
  const text = decodeUtf8(bytes);
  if (kind === "csv") checkCsvLines(text);
  if (text.length > FILE_LIMITS.maxSections * FILE_LIMITS.sectionChars) {
    throw overLimit(`Текст не помещается в ${FILE_LIMITS.maxSections} разделов.`);
  }
  sink.addSplit(text);
}

function checkCsvLines(text: string): void {
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    if (end - start > FILE_LIMITS.maxCsvLineChars) {
      throw overLimit(`Строка CSV длиннее ${FILE_LIMITS.maxCsvLineChars} символов.`);
    }
    if (nl === -1) return;
    start = nl + 1;
  }
}
