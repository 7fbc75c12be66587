/**
 * An answer the upstream client cannot read as HTTP/1.1 (wire_client.ts): the call fails like a broken
 * connection. What the HTTP/1.1 module refuses (src/http1, Http1Failure) reaches the engine as this.
 */
import { Http1Failure } from "../http1/failure.ts";

export class UpstreamProtocolFailure extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(`upstream HTTP/1.1: ${message}`, options);
    this.name = "UpstreamProtocolFailure";
  }
}

/** `err` as the upstream client fails with it: an Http1Failure becomes an UpstreamProtocolFailure. */
export function upstreamFailure(err: unknown): unknown {
  return err instanceof Http1Failure ? new UpstreamProtocolFailure(err.message, { cause: err }) : err;
}
