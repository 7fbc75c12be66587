/**
 * PDF: text per page with unpdf (the serverless build of Mozilla pdf.js: no DOM, no worker).
 * Anchors `#page=<n>`, ≤ 200 pages (read from the page tree before any page is parsed). Before
 * pdf.js sees the file every Flate stream is inflated once with a counting sink, so a
 * decompression bomb is refused after at most 256 MiB of inflation, without keeping the output.
 */
import { getDocumentProxy } from "unpdf";
import { FILE_LIMITS } from "../limits.ts";
import { overLimit, unreadable } from "./errors.ts";
import type { SectionSink } from "./sections.ts";

export async function extractPdf(bytes: Uint8Array, sink: SectionSink): Promise<void> {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  if (!head.includes("%PDF-")) throw unreadable("Файл не является PDF.");
  await checkInflation(bytes);
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may transfer (detach) the buffer it gets: give it a copy.
    doc = await getDocumentProxy(bytes.slice(), { stopAtErrors: false, verbosity: 0 });
  } catch (err) {
    const name = err instanceof Error ? err.name : "";
    if (name === "PasswordException") throw unreadable("PDF защищён паролем.");
    throw unreadable("PDF повреждён.");
  }
  try {
    if (doc.numPages > FILE_LIMITS.maxPdfPages) {
      throw overLimit(`В PDF больше ${FILE_LIMITS.maxPdfPages} страниц (${doc.numPages}).`);
    }
    for (let n = 1; n <= doc.numPages; n++) {
      let text = "";
      try {
        const page = await doc.getPage(n);
        const content = await page.getTextContent();
        for (const item of content.items) {
          if ("str" in item) text += item.str + (item.hasEOL ? "\n" : "");
        }
        page.cleanup();
      } catch {
        throw unreadable(`Страница ${n} PDF повреждена.`);
      }
      sink.add(`page=${n}`, text.trim());
    }
  } finally {
    await doc.cleanup().catch(() => {});
    await doc.loadingTask?.destroy().catch(() => {});
  }
}

/** Inflates every `/FlateDecode` stream, counting bytes only; over the bound → file_limit_exceeded. */
export async function checkInflation(bytes: Uint8Array, max: number = FILE_LIMITS.maxPdfInflatedBytes) {
  // latin1 maps one byte to one UTF-16 unit, so string offsets are byte offsets.
  const s = new TextDecoder("latin1").decode(bytes);
  let total = 0;
  let pos = 0;
  for (;;) {
    pos = s.indexOf("stream", pos);
    if (pos === -1) return;
    if (s.startsWith("end", pos - 3)) {
      pos += 6;
      continue;
    }
    let start = pos + 6;
    if (s[start] === "\r") start++;
    if (s[start] !== "\n") {
      pos = start;
      continue;
    }
    start++;
    const end = s.indexOf("endstream", start);
    if (end === -1) return;
    const obj = s.lastIndexOf(" obj", pos);
    const dict = s.slice(obj === -1 ? Math.max(0, pos - 4096) : obj, pos);
    if (dict.includes("/FlateDecode") || dict.includes("/Fl ") || dict.includes("/Fl]")) {
      total += await inflatedSize(bytes.subarray(start, end), max - total);
    }
    pos = end + 9;
  }
}

async function inflatedSize(data: Uint8Array, remaining: number): Promise<number> {
  // Fed in small chunks, so output is produced (and counted) as it goes: trailing junk after the
  // deflate data, which pdf.js tolerates, cannot hide a bomb behind an early decoder error.
  const ds = new DecompressionStream("deflate");
  const writer = ds.writable.getWriter();
  const feeding = (async () => {
    for (let i = 0; i < data.byteLength; i += 16_384) await writer.write(data.slice(i, i + 16_384));
    await writer.close();
  })().catch(() => {});
  const reader = ds.readable.getReader();
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return n;
      n += value.byteLength;
      if (n > remaining) {
        await reader.cancel().catch(() => {});
        throw overLimit("Сжатые потоки PDF распаковываются в слишком большой объём.");
      }
    }
  } catch (err) {
    if (err instanceof Error && err.name === "GatewayError") throw err;
    return n; // a damaged stream: pdf.js tolerates it the same way
  } finally {
    await writer.abort().catch(() => {});
    await feeding;
  }
}
