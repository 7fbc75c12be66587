import assert from "node:assert/strict";
import { firstByteLegs } from "./first_byte_legs.ts";

// Two streams through a proxy on 8080 to a mock on 9090, as `tcpdump -tt -n` prints them: handshakes and ACKs
// (length 0) between the steps, a request in two segments, an answer in three.
const CAPTURE = [
  "1000.000100 IP 127.0.0.1.50000 > 127.0.0.1.8080: Flags [S], seq 1, win 65495, length 0",
  "1000.000200 IP 127.0.0.1.50000 > 127.0.0.1.8080: Flags [P.], seq 1:200, ack 1, win 512, length 199",
  "1000.000210 IP 127.0.0.1.50000 > 127.0.0.1.8080: Flags [P.], seq 200:300, ack 1, win 512, length 100",
  "1000.000220 IP 127.0.0.1.8080 > 127.0.0.1.50000: Flags [.], ack 300, win 512, length 0",
  "1000.000400 IP 127.0.0.1.41000 > 127.0.0.1.9090: Flags [P.], seq 1:320, ack 1, win 512, length 319",
  "1000.000500 IP 127.0.0.1.9090 > 127.0.0.1.41000: Flags [P.], seq 1:5123, ack 320, win 512, length 5122",
  "1000.000510 IP 127.0.0.1.9090 > 127.0.0.1.41000: Flags [P.], seq 5123:5200, ack 320, win 512, length 77",
  "1000.000800 IP 127.0.0.1.8080 > 127.0.0.1.50000: Flags [P.], seq 1:2094, ack 300, win 512, length 2093",
  "1000.000900 IP 127.0.0.1.8080 > 127.0.0.1.50000: Flags [P.], seq 2094:4974, ack 300, win 512, length 2880",
  "1000.001000 IP 127.0.0.1.50000 > 127.0.0.1.8080: Flags [P.], seq 300:600, ack 4974, win 512, length 300",
  "1000.001150 IP 127.0.0.1.41000 > 127.0.0.1.9090: Flags [P.], seq 320:639, ack 5200, win 512, length 319",
  "1000.001250 IP 127.0.0.1.9090 > 127.0.0.1.41000: Flags [P.], seq 5200:10322, ack 639, win 512, length 5122",
  "1000.001400 IP 127.0.0.1.8080 > 127.0.0.1.50000: Flags [P.], seq 4974:7067, ack 600, win 512, length 2093",
  "tcpdump: 13 packets captured",
].join("\n");

const near = (actual: number[], expected: number[]) =>
  assert.deepEqual(actual.map((x) => Math.round(x * 1e6) / 1e6), expected);

Deno.test("firstByteLegs: each stream's pre, upstream and post legs from the first payload of each step", () => {
  const legs = firstByteLegs(CAPTURE, 8080, 9090);
  near(legs.pre, [0.2, 0.15]);
  near(legs.upstream, [0.1, 0.1]);
  near(legs.post, [0.3, 0.15]);
  near(legs.total, [0.6, 0.4]);
});

Deno.test("firstByteLegs: a stream cut off by the end of the capture is not counted", () => {
  const cut = CAPTURE.split("\n").slice(0, 12).join("\n"); // the second stream's answer never reached the client
  assert.equal(firstByteLegs(cut, 8080, 9090).total.length, 1);
  assert.equal(firstByteLegs(CAPTURE, 8081, 9090).total.length, 0); // another proxy's port: nothing
});
