/**
 * A map that holds at most `max` entries: setting one more drops the least recently used. `get` and
 * `set` count as use; `has` and `peek` do not. (A Map iterates in insertion order, so re-inserting an
 * entry on use keeps the least recently used one first.)
 */
export class LruCache<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`An LRU cache holds at least one entry (got ${max})`);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** The value without marking it used. */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as V;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  /** Keys from the least to the most recently used. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }
}
