// Collects items until a batch is full (count or bytes) or its first item has waited max_delay_ms,
// then hands the batch on. One batcher per batch stream (the actions of a sink that share a
// BoundAction.batchKey, core/path/sink-runner.ts); it never writes anything itself.
import type { BatchConfig } from '../../config/common-spec.js';

export class Batcher<T> {
  private items: T[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly policy: BatchConfig,
    private readonly flush: (batch: T[]) => void,
  ) {}

  get size(): number {
    return this.items.length;
  }

  add(item: T, bytes: number): void {
    this.items.push(item);
    this.bytes += bytes;
    if (this.items.length >= this.policy.max_items || this.bytes >= this.policy.max_bytes) {
      this.flushNow();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flushNow(), this.policy.max_delay_ms);
    }
  }

  /** Hands on whatever is collected (used by the timer, and at shutdown). */
  flushNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.items.length === 0) return;
    const batch = this.items;
    this.items = [];
    this.bytes = 0;
    this.flush(batch);
  }
}
