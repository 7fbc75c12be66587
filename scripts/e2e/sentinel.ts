/**
 * An HTTP(S) proxy on 127.0.0.1 that forwards nothing: the clients get it as HTTPS_PROXY / HTTP_PROXY /
 * ALL_PROXY (with NO_PROXY=127.0.0.1,localhost), so any attempt to reach a host outside loopback — auth,
 * update checks, telemetry, model lists — lands here, is recorded (the request line: `CONNECT host:443` or
 * an absolute URL) and refused with 403. Connections that ignore proxy variables are not seen here.
 */

export interface Sentinel {
  url: string;
  /** Request lines received, oldest first. */
  attempts: string[];
  close(): void;
}

export function startSentinel(): Sentinel {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const attempts: string[] = [];
  const refuse = new TextEncoder().encode(
    "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 31\r\nconnection: close\r\n\r\ne2e sentinel: no egress allowed",
  );
  (async () => {
    for await (const conn of listener) {
      (async () => {
        try {
          const buf = new Uint8Array(8192);
          const n = await conn.read(buf);
          const head = n ? new TextDecoder().decode(buf.subarray(0, n)) : "";
          attempts.push(head.split("\r\n", 1)[0] || "(empty)");
          await conn.write(refuse);
        } catch {
          // the client went away
        } finally {
          try {
            conn.close();
          } catch {
            // already closed
          }
        }
      })();
    }
  })().catch(() => {});
  const { port } = listener.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close() {
      listener.close();
    },
  };
}
