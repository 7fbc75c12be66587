/**
 * Who the client is, for the per-address request limit (docs/configuration.md, TRUSTED_PROXIES).
 *
 * The connection's peer address is the client, unless the peer is one of the trusted proxies: then
 * `X-Forwarded-For` is read from the right (each proxy appends the address it received the request
 * from) and the first address that is not itself a trusted proxy is the client. Entries to its left
 * were written by that client and are ignored, so a client cannot choose its address by sending the
 * header itself. An entry that is not an IP address ends the walk: the last trusted hop counts as
 * the client. An IPv4-mapped IPv6 address is its IPv4 address; an IPv6 client is counted by its /64
 * (one host usually holds a whole /64, so per-address buckets would not limit it). The same trust decides
 * whether a proxy's `X-Forwarded-Proto` is believed.
 */
import {
  type Cidr,
  cidrContains,
  clientBucketId,
  type IpAddress,
  parseForwardedIp,
  parseIp,
} from "../util/ip.ts";

export class ClientAddresses {
  constructor(private readonly trusted: readonly Cidr[]) {}

  isTrusted(ip: IpAddress): boolean {
    for (const range of this.trusted) if (cidrContains(range, ip)) return true;
    return false;
  }

  /**
   * Whether the request reached the gateway over HTTPS: the URL's scheme (TLS ended here), or the
   * `X-Forwarded-Proto` of a trusted proxy (the last value: the one the proxy next to the gateway wrote) —
   * never the header of a peer that is not one. The dashboard marks its cookies Secure then (src/dashboard/).
   */
  isHttps(url: URL, peer: string, forwardedProto: string | null): boolean {
    if (url.protocol === "https:") return true;
    const peerIp = parseIp(peer);
    if (forwardedProto === null || !peerIp || !this.isTrusted(peerIp)) return false;
    return forwardedProto.split(",").at(-1)!.trim().toLowerCase() === "https";
  }

  /** The client's bucket id: an IPv4 address or an IPv6 /64 (the peer's text when it is not an IP). */
  resolve(peer: string, forwardedFor: string | null): string {
    const peerIp = parseIp(peer);
    if (!peerIp) return peer === "" ? "unknown" : peer;
    if (forwardedFor === null || this.trusted.length === 0 || !this.isTrusted(peerIp)) {
      return clientBucketId(peerIp);
    }
    let client = peerIp;
    const hops = forwardedFor.split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const ip = parseForwardedIp(hops[i]!);
      if (!ip) break;
      client = ip;
      if (!this.isTrusted(ip)) break;
    }
    return clientBucketId(client);
  }
}
