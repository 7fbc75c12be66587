/**
 * Answers made with all of a request's own headers (RouteContext.headers, which include the ones the HTTP layer
 * puts on every answer): the server does not set those again. Setting a header on a finished `Response` makes
 * Deno 2.9 drop the native response it prepared when the Response was made, and serve it the slower way
 * (docs/performance.md, "JSON path: the gateway's own work": ≈2 µs of serving per JSON answer).
 */
const CARRIES = Symbol("carries the request's headers");

type Marked = Response & { [CARRIES]?: true };

/** Marks `res`, made with every header of the request's `RouteContext.headers`; returns it. */
export function carryingRequestHeaders(res: Response): Response {
  (res as Marked)[CARRIES] = true;
  return res;
}

/** Whether `res` was marked by `carryingRequestHeaders`. */
export function carriesRequestHeaders(res: Response): boolean {
  return (res as Marked)[CARRIES] === true;
}
