/**
 * Extraction in the current isolate: the kind decides the extractor; every extractor stops at the
 * first limit. Runs inside the extraction process or worker (host.ts), never on the gateway's loop.
 */
import type { FileSection } from "../store/store.ts";
import type { FileKind } from "./limits.ts";
import { extractDocx } from "./docx.ts";
import { extractPdf } from "./pdf.ts";
import { extractPptx } from "./pptx.ts";
import { SectionSink } from "./sections.ts";
import { extractText } from "./text.ts";
import { extractXlsx } from "./xlsx.ts";

export async function extractHere(fileId: string, kind: FileKind, bytes: Uint8Array): Promise<FileSection[]> {
  const sink = new SectionSink(fileId);
  switch (kind) {
    case "pdf":
      await extractPdf(bytes, sink);
      break;
    case "docx":
      await extractDocx(bytes, sink);
      break;
    case "pptx":
      await extractPptx(bytes, sink);
      break;
    case "xlsx":
      await extractXlsx(bytes, sink);
      break;
    default:
      extractText(bytes, kind, sink);
  }
  return sink.sections;
}
