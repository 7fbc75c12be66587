/**
 * Retries for the bot's calls to Telegram at start-up (getMe, setMyCommands, setWebhook) and its polling loop:
 * Telegram unreachable never holds up the gateway, so these run in the background, each failure
 * logged, with a doubling pause (1 s … 5 min) that the gateway's shutdown cuts short.
 */
import type { Api } from "grammy";
import type { Logger } from "../util/log.ts";
import { failure } from "./failure.ts";

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 300_000;

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/**
 * Runs `task` until it succeeds or `signal` aborts, pausing between attempts. Returns true when it
 * succeeded, false when stopped first.
 */
export async function retrying(
  what: string,
  task: () => Promise<unknown>,
  opts: { log: Logger; signal: AbortSignal },
): Promise<boolean> {
  let wait = FIRST_PAUSE_MS;
  while (!opts.signal.aborted) {
    try {
      await task();
      return true;
    } catch (err) {
      if (opts.signal.aborted) break;
      opts.log.warn("telegram: retrying", { what, retry_in_ms: wait, ...failure(err) });
      await pause(wait, opts.signal);
      wait = Math.min(wait * 2, MAX_PAUSE_MS);
    }
  }
  return false;
}

/**
 * The signal as grammY's API methods declare it: its npm types name the abort-controller package's
 * AbortSignal (its Node build's shim), while the web build that runs here takes the runtime's own.
 */
export type ApiSignal = NonNullable<Parameters<Api["getMe"]>[0]>;
export const apiSignal = (signal: AbortSignal): ApiSignal => signal as unknown as ApiSignal;
