// The end of a read-back (Kafka consumer, Pulsar reader): when the reader has had enough, one more
// second for anything beyond it (duplicates, which at-least-once allows); a failure when nothing
// arrives for `stallMs`, since a fixed deadline would fail long reads that are still going.

/** What a reader is told per item, and where it reports an error. */
export interface ReadFeed {
  /** One item read; `enough` when the caller has all it waits for. */
  item(enough: boolean): void;
  fail(err: unknown): void;
}

/** Runs `start` with a feed; resolves 1 s after the first item that was enough. */
export async function readUntil(what: string, stallMs: number, start: (feed: ReadFeed) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let read = 0;
      let lastRead = -1;
      let done = false;
      timer = setInterval(() => {
        if (read === lastRead) reject(new Error(`read ${read} of ${what}, then nothing for ${stallMs} ms`));
        lastRead = read;
      }, stallMs);
      start({
        item(enough) {
          read++;
          if (enough && !done) {
            done = true;
            setTimeout(resolve, 1_000);
          }
        },
        fail: reject,
      });
    });
  } finally {
    clearInterval(timer);
  }
}
