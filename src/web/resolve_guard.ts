/**
 * The resolution half of the fetch guard: the gateway resolves the name itself (A and AAAA), every
 * address of the answer must pass the address policy, and the caller then connects only to one of
 * these checked addresses (pinned_fetch.ts), never to the name. So a DNS answer that changes between
 * the check and the connect (rebinding) is never used.
 */
import { isPublicAddress } from "./ip_ranges.ts";
import { type CheckedUrl, checkUrl, PRODUCTION_PORTS, UrlRejected } from "./url_rules.ts";

/** Returns the addresses of one record type; an empty list when the name has none of that type. */
export type Resolver = (name: string, type: "A" | "AAAA") => Promise<string[]>;
/** True when the fetcher may connect to this address. */
export type AddressPolicy = (ip: string) => boolean;

export const DNS_TIMEOUT_MS = 5_000;

/** Production resolver: Deno.resolveDns with a timeout; "no records" is an empty answer. */
export const systemResolver: Resolver = async (name, type) => {
  const signal = AbortSignal.timeout(DNS_TIMEOUT_MS);
  try {
    return await Deno.resolveDns(name, type, { signal });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
};

export interface GuardDeps {
  resolver: Resolver;
  policy: AddressPolicy;
  ports: ReadonlySet<number>;
}

export const PRODUCTION_GUARD: GuardDeps = Object.freeze({
  resolver: systemResolver,
  policy: isPublicAddress,
  ports: PRODUCTION_PORTS,
});

export class ResolveFailed extends Error {
  constructor(readonly host: string, cause: unknown) {
    super(`DNS lookup of ${host} failed: ${cause instanceof Error ? cause.message : cause}`);
    this.name = "ResolveFailed";
  }
}

export interface Destination extends CheckedUrl {
  /** Checked addresses, IPv4 first; the connection goes to one of these and nowhere else. */
  addresses: string[];
}

/** Resolves a checked host; throws UrlRejected when any address is refused or there is none. */
export async function resolveChecked(
  host: string,
  deps: Pick<GuardDeps, "resolver" | "policy">,
): Promise<string[]> {
  let answers: string[][];
  try {
    answers = await Promise.all([deps.resolver(host, "A"), deps.resolver(host, "AAAA")]);
  } catch (err) {
    throw new ResolveFailed(host, err);
  }
  const all = [...new Set(answers.flat())];
  if (all.length === 0) throw new UrlRejected("rejected", `${host} has no A or AAAA record`);
  const bad = all.find((ip) => !deps.policy(ip));
  if (bad !== undefined) throw new UrlRejected("rejected", `${host} resolves to a non-public address`);
  return all;
}

/** The whole guard for one URL (the first one or a redirect hop). */
export async function guardDestination(raw: string, deps: GuardDeps): Promise<Destination> {
  const checked = checkUrl(raw, deps.ports);
  const addresses = await resolveChecked(checked.host, deps);
  return { ...checked, addresses };
}
