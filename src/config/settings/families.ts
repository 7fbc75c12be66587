/** Families settings: what one family adds to the common path. */
import { z } from "zod";
import { ms } from "./fields.ts";

export const families = {
  BETA_SERVER_PROMPT: z.string().min(1).default(
    "Отвечай на русском языке, если пользователь явно не попросил другой язык.",
  ).describe(
    "Family beta: the operator's server prompt, put before the client's own system prompt on every " +
      "beta id but beta-fable-5 and beta-fable-5-1 (spec §2.1). Default: answer in Russian unless " +
      "asked otherwise (spec §1.9).",
  ),
  DELTA_RUN_TIMEOUT_MS: ms(600_000).describe(
    "Families gamma and eta: a run (the upstream call to its last byte) not finished within this " +
      "long is cancelled upstream and ends with `delta_run_timeout`, the work done billed, ms (spec " +
      "§7.5, §8.4). Default 600 s.",
  ),
  DELTA_MAX_OPEN_LOOPS: z.coerce.number().int().positive().default(8).describe(
    "Families gamma and eta: unfinished client tool loops one key may have open; at the limit a " +
      "request that continues none of them is 429 `delta_key_pause_limit` (spec §7.5). Default 8.",
  ),
  DELTA_LOOP_TTL_MS: ms(600_000).describe(
    "Families gamma and eta: an open tool loop not continued within this long is dropped, ms. " +
      "Default 10 min.",
  ),
  THETA_QUEUE_TIMEOUT_MS: ms(30_000).describe(
    "Family theta: the queue wait, how long a request waits for a free upstream account before 429 " +
      "`queue_timeout`, ms (spec §7.6, §8.4). Default 30 s.",
  ),
  THETA_GENERATION_TIMEOUT_MS: ms(600_000).describe(
    "Family theta: one generation runs at most this long, then `generation_timeout`, billed for " +
      "the work done, ms (spec §7.6, §8.4). Default 10 min.",
  ),
  THETA_IDLE_RELEASE_MS: ms(600_000).describe(
    "Family theta: an upstream account bound to a key is free for other keys after this long " +
      "without a request, ms (spec §8.4). Default 10 min.",
  ),
};
