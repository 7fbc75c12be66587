/** Stand-in upstreams for tests that need an answer the simulator does not give. */

/** An upstream that streams Chat chunks only as fast as they are pulled, counting bytes produced. */
export function countingUpstream(totalChunks: number) {
  let produced = 0;
  let cancelled = false;
  const chunk = (i: number) =>
    `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"k3","choices":[{"index":0,"delta":{"content":"слово ${i} "},"finish_reason":null}]}\n\n`;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, () => {
    let i = 0;
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (i >= totalChunks) {
          c.enqueue(
            enc.encode(
              'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"k3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
            ),
          );
          c.close();
          return;
        }
        const bytes = enc.encode(chunk(i++));
        produced += bytes.byteLength;
        c.enqueue(bytes);
      },
      cancel() {
        cancelled = true;
      },
    }, { highWaterMark: 0 });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    get produced() {
      return produced;
    },
    get cancelled() {
      return cancelled;
    },
    close: () => server.shutdown(),
  };
}

/** An upstream that answers every request with `answer()` (a fixed JSON body, for example). */
export function fixedUpstream(answer: (req: Request) => Response | Promise<Response>) {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, answer);
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    close: () => server.shutdown(),
  };
}
