/// <reference lib="deno.worker" />
/** The worker thread of bench/pg_wire.ts's PgWireCounter: runs the WireProxy and answers its requests. */
import { type WireAnswer, WireProxy, type WireRequest } from "./pg_wire.ts";

let proxy: WireProxy | undefined;

self.onmessage = (e: MessageEvent<WireRequest>) => {
  const req = e.data;
  const answer = (a: WireAnswer) => self.postMessage(a);
  if ("start" in req) {
    proxy = WireProxy.start(req.start);
    answer({ url: proxy.url });
  } else if ("reset" in req) {
    proxy!.reset();
    answer({});
  } else if ("trips" in req) {
    answer({ trips: proxy!.trips(), encrypted: proxy!.encrypted });
  } else {
    proxy?.close();
    answer({});
  }
};
