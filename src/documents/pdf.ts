/**
 * PDF: text per page with unpdf (the serverless build of Mozilla pdf.js: no DOM, no worker).
 * Anchors `#page=<n>`, ≤ 200 pages (read from the page tree before any page is parsed). Before
 * pdf.js sees the file, the pre-pass of pdf_streams.ts decodes every stream pdf.js could decode under
 * one byte budget, so a decompression bomb is refused after at most that many bytes of output,
 * whatever the spelling of its filter, without keeping the output.
 */
import { getDocumentProxy } from "unpdf";
import { FILE_LIMITS } from "./limits.ts";
import { overLimit, unreadable } from "./errors.ts";
import { checkPdfStreams } from "./pdf_streams.ts";
import type { SectionSink } from "./sections.ts";

/** Back to the event loop between pages, so a terminated worker stops at the next page. */
const yieldToLoop = () => new Promise<void>((r) => setTimeout(r, 0));

export async function extractPdf(bytes: Uint8Array, sink: SectionSink): Promise<void> {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  if (!head.includes("%PDF-")) throw unreadable("Файл не является PDF.");
  await checkPdfStreams(bytes);
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
      await yieldToLoop();
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
