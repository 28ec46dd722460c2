// Structured JSON logs through pino. One line per state change; secrets never reach a log line:
// known secret keys are redacted, and URLs with credentials are scrubbed by redactUrl().
// `log_format: pretty` writes the same lines for a person at a terminal (log-pretty.ts).
import { isatty } from 'node:tty';
import { pino } from 'pino';
import { prettyLine } from './log-pretty.js';

export type Logger = pino.Logger;

const REDACT = ['password', '*.password', '*.*.password', 'token', '*.token', '*.*.token', 'connection_string', '*.connection_string', '*.*.connection_string'];

/** `json`: one JSON object per line, for a log collector (the default). `pretty`: for a terminal. */
export type LogFormat = 'json' | 'pretty';

/** Logs to stdout; a command whose stdout is its result (weir dlq) logs to stderr (fd 2). */
export function createLogger(level: string = process.env.WEIR_LOG_LEVEL ?? 'info', fd: 1 | 2 = 1, format: LogFormat = 'json'): Logger {
  const opts = { level, base: { app: 'weir' }, redact: { paths: REDACT, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === 'pretty') {
    const out = pino.destination({ fd, sync: true });
    const colour = isatty(fd) && !process.env.NO_COLOR;
    return pino(opts, { write: (line: string) => out.write(prettyLine(line, colour)) });
  }
  return fd === 1 ? pino(opts) : pino(opts, pino.destination({ fd, sync: true }));
}

/** A logger that writes nothing, for library callers and tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Removes the password from a URL-shaped string (`postgres://u:secret@h/db` → `postgres://u:***@h/db`). */
export function redactUrl(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)[^@/\s]*@/gi, '$1***@');
}
