/** Reads a byte stream to its end; past `limit` bytes it cancels the stream and throws `onOver()`. */
import { concatBytes } from "./bytes.ts";

export async function readBounded(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onOver: () => Error,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) throw onOver();
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel().catch(() => {});
    throw err;
  }
  return concatBytes(chunks);
}
