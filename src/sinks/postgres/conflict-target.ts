// What an action's `on_conflict` is arbitrated by, read from its text for `weir check --connect`'s
// messages and suggested DDL (whether the table has it is asked of the server: verify.ts):
//
//   (device_id, ts, seq) DO NOTHING          → columns [device_id, ts, seq]
//   ON CONSTRAINT telemetry_key DO NOTHING   → constraint telemetry_key
//   (lower(name)) DO NOTHING                 → an expression target: columns undefined
//   DO NOTHING                               → no target: any constraint's conflict is skipped
//
// PostgreSQL accepts a column list only where a unique index or constraint (or an exclusion
// constraint) has exactly those columns, and refuses every insert otherwise (42P10).

export type ConflictTarget =
  /** `(…)`: `columns` when each element is a plain column name (as PostgreSQL folds it), else undefined. */
  | { readonly kind: 'columns'; readonly text: string; readonly columns: readonly string[] | undefined }
  | { readonly kind: 'constraint'; readonly text: string; readonly name: string }
  | { readonly kind: 'none' };

const IDENT = /^(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))$/;

export function conflictTarget(onConflict: string): ConflictTarget {
  const head = /^\s*([\s\S]*?)\s*\bDO\s+(?:NOTHING|UPDATE)\b/i.exec(onConflict)?.[1] ?? '';
  const named = /^ON\s+CONSTRAINT\s+(\S+)$/i.exec(head);
  if (named) return { kind: 'constraint', text: head, name: named[1]! };
  if (!head.startsWith('(')) return { kind: 'none' };
  // The list up to its closing parenthesis (an index predicate, `WHERE …`, may follow).
  let depth = 0;
  let end = 0;
  for (; end < head.length; end++) {
    if (head[end] === '(') depth++;
    else if (head[end] === ')' && --depth === 0) break;
  }
  const list = head.slice(1, end);
  const names = list.split(',').map((c) => IDENT.exec(c.trim()));
  const columns = names.every(Boolean) ? names.map((m) => (m![1] !== undefined ? m![1].replace(/""/g, '"') : m![2]!.toLowerCase())) : undefined;
  return { kind: 'columns', text: head.slice(0, end + 1), columns };
}
