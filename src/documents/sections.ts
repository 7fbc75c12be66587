/** Collects sections while a document is parsed and stops as soon as a limit is crossed. */
import type { FileSection } from "../store/store.ts";
import { FILE_LIMITS } from "./limits.ts";
import { overLimit } from "./errors.ts";

export class SectionSink {
  readonly sections: FileSection[] = [];
  #chars = 0;

  constructor(readonly fileId: string) {}

  /**
   * Refuses, before any string is built, text that would take the document past the extracted-text
   * bound once `pending` more characters are added (e.g. a row whose cells all repeat one long
   * shared string: joining it would fail inside V8 long before it reached the bound).
   */
  reserve(pending: number): void {
    if (this.#chars + pending > FILE_LIMITS.maxExtractedChars) {
      throw overLimit("Извлечённый текст документа слишком велик.");
    }
  }

  /** Adds one section; `fragment` is the anchor part after `#`. */
  add(fragment: string, text: string): void {
    if (this.sections.length >= FILE_LIMITS.maxSections) {
      throw overLimit(`Документ даёт больше ${FILE_LIMITS.maxSections} разделов.`);
    }
    this.#chars += text.length;
    if (this.#chars > FILE_LIMITS.maxExtractedChars) {
      throw overLimit("Извлечённый текст документа слишком велик.");
    }
    this.sections.push({ text, anchor: `${this.fileId}#${fragment}` });
  }

  /** Adds `text` as one or more bounded sections `#section=<n>` (numbered across the document). */
  addSplit(text: string, max: number = FILE_LIMITS.sectionChars): void {
    for (const piece of splitText(text, max)) this.add(`section=${this.sections.length + 1}`, piece);
  }
}

/** Cuts text into pieces of at most `max` characters, preferring line breaks, never splitting a surrogate pair. */
export function splitText(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    if (end < text.length) {
      const nl = text.lastIndexOf("\n", end - 1);
      if (nl > start + max / 2) end = nl + 1;
      else if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
