// An asynchronous step done once and its promise kept (connecting clients, creating a topic), but
// forgotten when it fails, so that the next call, a retry of the core's, tries again.
export class KeptAttempt<T> {
  private current: Promise<T> | undefined;

  constructor(private readonly make: () => Promise<T>) {}

  get(): Promise<T> {
    if (!this.current) {
      const attempt = this.make();
      this.current = attempt;
      attempt.catch(() => {
        if (this.current === attempt) this.current = undefined;
      });
    }
    return this.current;
  }

  /** The kept promise, if any, without starting one. */
  peek(): Promise<T> | undefined {
    return this.current;
  }

  /** Forgets the kept promise (only `which`, when given and still the kept one); resolves with what was kept. */
  forget(which?: Promise<T>): Promise<T> | undefined {
    const was = this.current;
    if (which === undefined || which === was) this.current = undefined;
    return which === undefined || which === was ? was : undefined;
  }
}
