// A schema that does not load, with where its own parser says the problem is (the registry turns
// it into a ConfigError at that file:line).
export class SchemaLoadError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
  ) {
    super(message);
  }
}
