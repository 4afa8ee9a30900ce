/**
 * The notifications a push channel sent and the replica has not acknowledged yet, oldest
 * first: what an `Ack` up to a sequence releases from the channel's window.
 */
export class Unacked {
  #sequences: number[] = [];
  #bytes: number[] = [];
  #head = 0;

  /** How many are held. */
  get size(): number {
    return this.#sequences.length - this.#head;
  }

  /**
   * Holds one sent notification.
   *
   * @param sequence Its sequence.
   * @param bytes Its frame's size.
   */
  push(sequence: number, bytes: number): void {
    this.#sequences.push(sequence);
    this.#bytes.push(bytes);
  }

  /**
   * Releases the oldest ones up to `sequence` (a cumulative ack).
   *
   * @param sequence The acknowledged sequence.
   * @returns How many were released, and their bytes.
   */
  release(sequence: number): { released: number; releasedBytes: number } {
    let released = 0;
    let releasedBytes = 0;
    while (this.#head < this.#sequences.length && this.#sequences[this.#head]! <= sequence) {
      releasedBytes += this.#bytes[this.#head++]!;
      released++;
    }
    if (this.#head === this.#sequences.length) this.clear();
    else if (this.#head >= 1024) {
      this.#sequences = this.#sequences.slice(this.#head);
      this.#bytes = this.#bytes.slice(this.#head);
      this.#head = 0;
    }
    return { released, releasedBytes };
  }

  /** Forgets them all (a new catch-up opens a new window). */
  clear(): void {
    this.#sequences = [];
    this.#bytes = [];
    this.#head = 0;
  }
}
