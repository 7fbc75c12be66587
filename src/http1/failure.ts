/**
 * An HTTP/1.1 message this module cannot read (RFC 9112): a malformed head, a framing it refuses, broken chunked
 * coding, a line past its bound. Each client turns it into its own failure (the upstream client's
 * UpstreamProtocolFailure, the page fetch's FetchFailed "protocol"); the message says what was wrong.
 */
export class Http1Failure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Http1Failure";
  }
}
