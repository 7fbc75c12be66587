/** One extraction job inside the extraction process or worker: extract, then answer section by section. */
import { errorReply, type JobHeader, type Reply } from "./protocol.ts";
import { extractHere } from "./run.ts";

export async function runJob(
  job: JobHeader,
  bytes: Uint8Array,
  send: (r: Reply) => Promise<void> | void,
): Promise<void> {
  let sections;
  try {
    sections = await extractHere(job.fileId, job.kind, bytes);
  } catch (err) {
    await send(errorReply(job.id, err));
    return;
  }
  for (const s of sections) await send({ t: "section", id: job.id, anchor: s.anchor, text: s.text });
  await send({ t: "done", id: job.id });
}
