// Plain-text tables for the commands' output (reconcile, dlq).

/** Columns padded to their widest cell; `align` has an l (names) or r (counts) per column. */
export function columns(head: string[], rows: string[][], align: string, indent = ''): string {
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((c, i) => (align[i] === 'l' ? c.padEnd(width[i]!) : c.padStart(width[i]!)))
      .join('  ')
      .trimEnd();
  return `${[head, ...rows].map(line).join('\n')}\n`;
}
