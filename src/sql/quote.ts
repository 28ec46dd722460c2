// SQL identifiers quoted as PostgreSQL reads them: in double quotes, a quote inside doubled. Used by
// the postgres sink's statements and by `weir reconcile`'s sequence check, which queries the same
// tables without going through the sink.

/** Quotes a possibly schema-qualified name (`schema.table`, validated by the action spec) as identifiers. */
export function quoteTable(name: string): string {
  return name.split('.').map(quoteIdent).join('.');
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
