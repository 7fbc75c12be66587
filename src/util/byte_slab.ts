/**
 * Small byte arrays carved from a shared slab, as Node's Buffer pool does. In V8 a `new Uint8Array` of a few
 * hundred bytes costs ≈0.8 µs (an off-heap backing store, zeroed, and its bookkeeping for the collector); a
 * view of a slab costs a small object. No range is ever handed out twice: each array is bytes nobody had
 * before (zero until written), and a slab is freed once none of its arrays is referenced.
 *
 * A view shares its `buffer` with the other arrays of its slab, so an array taken here must stay inside the
 * code that took it (written to a socket, say): never stored, serialized or transferred, where the whole
 * buffer would go with it.
 */

export interface ByteAlloc {
  /** `n` bytes, all zero. */
  take(n: number): Uint8Array;
  /** The array `take` returned last, cut to its first `used` bytes (the rest may be handed out again). */
  keep(a: Uint8Array, used: number): Uint8Array;
}

/** Each array its own allocation. */
export const OWN_ARRAYS: ByteAlloc = {
  take: (n) => new Uint8Array(n),
  keep: (a, used) => a.subarray(0, used),
};

export class ByteSlab implements ByteAlloc {
  #slab = new Uint8Array(0);
  #used = 0;

  /** The largest array carved from a slab: a larger one is an allocation of its own. */
  readonly largest: number;

  /** `slabBytes`: each slab's size; an array above a quarter of it is an allocation of its own. */
  constructor(private readonly slabBytes = 64 * 1024) {
    this.largest = slabBytes >> 2;
  }

  take(n: number): Uint8Array {
    if (n > this.largest) return new Uint8Array(n);
    if (this.#used + n > this.#slab.length) {
      this.#slab = new Uint8Array(this.slabBytes);
      this.#used = 0;
    }
    const start = this.#used;
    this.#used += n;
    return this.#slab.subarray(start, start + n);
  }

  keep(a: Uint8Array, used: number): Uint8Array {
    // Only the last array's end goes back, zeroed: what a caller wrote there is never handed to another.
    if (a.buffer === this.#slab.buffer && a.byteOffset + a.length === this.#used && used < a.length) {
      this.#used = a.byteOffset + used;
      this.#slab.fill(0, this.#used, a.byteOffset + a.length);
    }
    return a.subarray(0, used);
  }
}
