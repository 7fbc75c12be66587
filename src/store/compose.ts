/**
 * A store is the union of its capability objects (store.ts): each capability's methods are bound once onto
 * the store, so a call reaches the capability's own method directly — no method of the store only forwards,
 * and no call costs an extra frame, await or allocation. A capability's class has as methods exactly its
 * capability's; what the store alone calls (stopping watches, a sweep) is a function field, not a method.
 */

/** Binds every method of each part's class (`constructor` aside) onto `target`. A name already on `target` or
 *  on another part is a mistake in the composition: throws. */
export function bindCapabilities(target: object, parts: readonly object[]): void {
  for (const part of parts) {
    const proto = Object.getPrototypeOf(part);
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (name === "constructor" || typeof method !== "function") continue;
      if (name in target) throw new Error(`store capability method ${name} composed twice`);
      Object.defineProperty(target, name, {
        value: method.bind(part),
        writable: true, // a test may replace one (a store that fails or stalls)
        configurable: true,
      });
    }
  }
}
