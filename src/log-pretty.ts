// `log_format: pretty`: pino's JSON line as one line for a person at a terminal,
//
//   2026-12-05T11:25:00.520Z INFO  connected to broker  client_id=weir-0 session_present=true
//
// time, level, message, then every other field as key=value (a value with a space, quote or `=`
// JSON-quoted, an object as JSON), so a line stays one line and grep still finds a field. An error
// object's stack follows on indented lines. The level is coloured when the output is a terminal
// and NO_COLOR is not set.
//
// Why not pino-pretty (13.2.0, pino's own, well kept): it brings 19 packages (14 not already in
// weir's tree, 2.0 MB) and took 120-200 ms to import on this machine (loaded), for what these
// lines need of it: one JSON.parse and a join per line. Its options (custom formats, message
// keys, its CLI) are not wanted here; JSON stays the default for machines.

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** ANSI colours by level: grey, grey, green, yellow, red, red on white. */
const COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '41;97' };
/** Fields every line has (`app` is weir's constant base field); shown in their own places or not at all. */
const OWN = new Set(['level', 'time', 'msg', 'app', 'pid', 'hostname']);

/** One pino JSON line (with or without its newline) as a pretty line ending in a newline. */
export function prettyLine(json: string, colour = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = typeof o.level === 'number' ? (LEVELS[o.level] ?? String(o.level)) : String(o.level);
  const tag = level.padEnd(5);
  const head = [
    String(o.time ?? ''),
    colour && typeof o.level === 'number' ? `\u001b[${COLOURS[o.level] ?? '0'}m${tag}\u001b[0m` : tag,
    String(o.msg ?? '').replaceAll('\n', '\\n'),
  ];
  const stacks: string[] = [];
  const fields: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (OWN.has(k) || v === undefined) continue;
    const stack = v && typeof v === 'object' ? (v as { stack?: unknown }).stack : undefined;
    if (typeof stack === 'string') {
      fields.push(`${k}=${value((v as { message?: unknown }).message ?? '')}`);
      stacks.push(stack.replace(/^/gm, '    '));
    } else {
      fields.push(`${k}=${value(v)}`);
    }
  }
  return `${head.join(' ')}${fields.length ? `  ${fields.join(' ')}` : ''}\n${stacks.map((s) => `${s}\n`).join('')}`;
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return String(v);
  return JSON.stringify(v);
}
