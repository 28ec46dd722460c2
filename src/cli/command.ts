// What a command is: its one-line summary for `weir --help`, and how it runs.
export interface Command {
  readonly summary: string;
  run(args: string[]): Promise<number>;
}
