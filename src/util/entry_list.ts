/**
 * Entries that come and go in any order, each added and taken out in O(1), in a list that lives long: the
 * registrations every request or every stream makes with something process-wide (the shutdown's cut, the
 * ticker, the connections being drained). Not a Set: a Set that lives long rebuilds its table in the old
 * generation as entries come and go, ≈15 µs of garbage collection per request on the JSON path; nor listeners
 * on an EventTarget, which scans all of them on every add and remove (docs/performance.md, "Told of the
 * shutdown's cut").
 */

/** One entry: `value` is undefined once it is out. */
export interface ListEntry<T> {
  value: T | undefined;
  prev: ListEntry<T> | undefined;
  next: ListEntry<T> | undefined;
}

export class EntryList<T> {
  #first: ListEntry<T> | undefined;
  #last: ListEntry<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `value` (never undefined) at the end; the entry takes it out again (`remove`). */
  add(value: T): ListEntry<T> {
    const e: ListEntry<T> = { value, prev: this.#last, next: undefined };
    if (this.#last) this.#last.next = e;
    else this.#first = e;
    this.#last = e;
    this.#size++;
    return e;
  }

  /** Takes `e` out; nothing if it is out already. It keeps `next`, so a walk standing on it goes on. */
  remove(e: ListEntry<T>): void {
    if (e.value === undefined) return;
    e.value = undefined;
    this.#size--;
    if (e.prev) e.prev.next = e.next;
    else this.#first = e.next;
    if (e.next) e.next.prev = e.prev;
    else this.#last = e.prev;
    e.prev = undefined;
  }

  /** Calls `fn` with each value in order; one taken out meanwhile is skipped, one added meanwhile is visited. */
  forEach(fn: (value: T) => void): void {
    for (let e = this.#first; e; e = e.next) if (e.value !== undefined) fn(e.value);
  }

  /** Takes every entry out; their values, in order. */
  takeAll(): T[] {
    const values: T[] = [];
    for (let e = this.#first; e; e = e.next) {
      values.push(e.value!);
      e.value = e.prev = undefined;
    }
    this.#first = this.#last = undefined;
    this.#size = 0;
    return values;
  }
}

/** An entry that is in no list (what a registration that is over at once returns). */
export function outEntry<T>(): ListEntry<T> {
  return { value: undefined, prev: undefined, next: undefined };
}
