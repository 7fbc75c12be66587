/**
 * Every limit of the file store (spec §8.2) and of document extraction, and the bounds this implementation adds,
 * in one place: below both the files and the extraction library, so each reads the same table.
 */

export const MiB = 1024 * 1024;

export const FILE_LIMITS = {
  /** spec §8.2: single file up to 10 MiB. */
  maxFileBytes: 10 * MiB,
  /** Multipart overhead allowed on top of the file (boundaries, headers, the purpose field). */
  multipartSlackBytes: 64 * 1024,
  /** spec §8.2 per-key quota, measured on the stored record (file + extracted sections). */
  quotaFiles: 20,
  quotaBytes: 50 * MiB,
  maxPdfPages: 200,
  maxSlides: 500,
  /** .docx and .pptx: paragraphs, table rows and tables count as blocks. */
  maxBlocks: 50_000,
  maxSheets: 200,
  maxRowsPerSheet: 20_000,
  maxCells: 200_000,
  maxCellChars: 32_768,
  maxSections: 1000,
  /** Target size of one section in characters (text formats, xlsx parts, long docx sections). */
  sectionChars: 16_384,
  /** A single CSV line longer than this is refused (a one-line 10 MiB "table" is not a table). */
  maxCsvLineChars: 1 * MiB,
  /** Request side (spec §4.2, §8.2). */
  maxReferences: 20,
  maxBlockBytes: 2 * MiB,
  /** Zip containers (hostile-file bounds, not in the spec). */
  maxZipEntries: 10_000,
  /** Actual inflated bytes of one XML part we read. */
  maxZipEntryBytes: 64 * MiB,
  /** Actual inflated bytes read from one container in total. */
  maxZipTotalBytes: 160 * MiB,
  /**
   * PDF: decoded bytes of every stream pdf.js could decode, all filters and stages together, counted
   * while decoding (pdf_streams.ts; decompression bombs). Image XObjects are not decoded.
   */
  maxPdfDecodedBytes: 128 * MiB,
  /** Extracted text of one document, characters (sections × section size, with slack). */
  maxExtractedChars: 1000 * 16_384 + 1 * MiB,
  /**
   * Documents extracted at the same time, each in its own extraction process (pool.ts).
   * Uploads and /v1/alpha/fetch PDFs share them.
   */
  extractWorkers: 2,
  /** Documents that may wait for a free extraction process; one more is refused (429, Retry-After 1). */
  extractQueue: 16,
  /** Wall-clock limit of one extraction; past it the process is killed (file_limit_exceeded). */
  extractTimeoutMs: 30_000,
  /** Resident memory of one extraction process; past it the process is killed (file_limit_exceeded). */
  extractMemoryBytes: 512 * MiB,
  /** V8 heap limit of an extraction process (--max-old-space-size, MiB). */
  extractHeapMiB: 384,
  /** An extraction process still holding more than this after a job is replaced by a fresh one. */
  extractRecycleBytes: 256 * MiB,
} as const;

export type FileKind = "pdf" | "txt" | "md" | "json" | "csv" | "docx" | "xlsx" | "pptx";

export const CONTENT_TYPES: Record<FileKind, string> = {
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  csv: "text/csv",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

/** The kind from the file name's extension (case-insensitive), or undefined when not accepted. */
export function kindOf(filename: string): FileKind | undefined {
  const m = /\.([A-Za-z]+)$/.exec(filename);
  const ext = m?.[1]?.toLowerCase();
  return ext !== undefined && ext in CONTENT_TYPES ? ext as FileKind : undefined;
}
