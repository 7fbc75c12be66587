/** What the pool (pool.ts) needs from an extraction host: a process (preferred) or a worker. */
import type { FileSection } from "../store/store.ts";
import { type FileKind, MiB } from "./limits.ts";
import { overLimit } from "./errors.ts";

export interface JobInput {
  fileId: string;
  kind: FileKind;
  bytes: Uint8Array;
  /** The caller no longer needs `bytes`: a worker may take the buffer instead of a copy. */
  transfer: boolean;
}

export interface RunLimits {
  /** Wall-clock limit of one extraction. */
  timeoutMs: number;
  /** Resident memory the extraction may reach (process: its RSS; worker: growth of ours). 0 = off. */
  memoryBytes: number;
  /** How often memory is sampled while a job runs. */
  sampleMs: number;
}

export interface Runner {
  /** Whether it can take another job. */
  readonly alive: boolean;
  /** Resident bytes after the last job (0 when unknown). */
  readonly rssBytes: number;
  readonly jobs: number;
  extract(job: JobInput, limits: RunLimits): Promise<FileSection[]>;
  /** Ends it; resolves once whatever it started (a process, its pipes) is gone. */
  close(): Promise<void>;
}

export const timeLimitExceeded = (ms: number) =>
  overLimit(
    `Извлечение текста длилось дольше ${ms < 1000 ? `${ms} мс` : `${Math.round(ms / 100) / 10} с`}: ` +
      "документ слишком сложен.",
  );

export const memoryLimitExceeded = (bytes: number) =>
  overLimit(`Извлечение текста потребовало больше ${Math.round(bytes / MiB)} МиБ памяти.`);
