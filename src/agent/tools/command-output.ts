/**
 * @module The combined stdout+stderr of a workspace command, capped: the first and last halves of the cap are
 * kept (the start shows what ran, the end usually holds the error) and the middle is replaced by a note.
 */
import { decodeCut } from './result.ts';

export class CappedOutput {
  private readonly half: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;
  readonly capBytes: number;

  constructor(capBytes: number) {
    this.capBytes = capBytes;
    this.half = Math.floor(capBytes / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.half) {
      const take = chunk.subarray(0, this.half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - this.tail[0].length >= this.half) this.tailBytes -= this.tail.shift()!.length;
  }

  get truncated(): boolean {
    return this.total > this.capBytes;
  }

  /** The kept text; when cut, with a note saying how much of the middle is missing. */
  text(): string {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (!this.truncated) return Buffer.concat([head, tail]).toString('utf8');
    const keptTail = tail.subarray(tail.length - (this.capBytes - this.half));
    const cut = this.total - head.length - keptTail.length;
    const note = `\n[output cut at ${this.capBytes / 1024} KiB: ${cut} bytes from the middle not shown; redirect to a file and read it, or filter with grep/head/tail]\n`;
    return decodeCut(head) + note + keptTail.toString('utf8').replace(/^\uFFFD+/, '');
  }
}
