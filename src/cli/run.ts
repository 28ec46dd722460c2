// weir run: start the pipeline and keep it running until SIGTERM/SIGINT; SIGHUP or an edit in
// the rules directory reloads the rules (core/rules-watch.ts).
import { Runtime } from '../core/runtime.js';
import { watchRules } from '../core/rules-watch.js';
import { errorText } from '../errors.js';
import { createLogger, redactUrl } from '../log.js';
import { migratableSinks, migrateSinks } from '../core/migrate-sinks.js';
import { logSinkProblems } from '../core/log-sink-problems.js';
import { CONFIG_HELP, CONFIG_OPTION, parse } from './args.js';
import type { Command } from './commands.js';
import { loadOrReport } from './load-or-report.js';
import { logSessionNotice } from './session-notice.js';

/** How long a stopped weir waits for its event loop to empty before it exits anyway. */
const EXIT_WAIT_MS = 2_000;

const HELP = `usage: weir run [--config FILE] [--grace-ms N] [--drain] [--transient]

Connects to the broker and the sinks and runs the rules until SIGTERM or SIGINT. On those it stops
reading, stores what it read, acks what it stored and disconnects, keeping its broker sessions so
nothing is lost across a restart. SIGHUP, or an edit of a rule file, reloads the rules; an invalid
edit is rejected and the running rules stay (counted in weir_rules_reload_failures_total, its
errors shown on /rules).

${CONFIG_HELP}  --grace-ms N        how long shutdown waits for in-flight messages (default 30000)
  --drain             on SIGTERM, leave the share group for good: unsubscribe, finish, end the
                      broker sessions (for a member removed by a scale-down, not for restarts)
  --transient         connect with clean start and session expiry 0: the broker drops the
                      sessions at disconnect and deals them no messages while weir is away.
                      For a one-off or debugging run beside a share group in production; never
                      for a replica, whose restart would then lose its queue (docs/operations.md)
`;

export const runCommand: Command = {
  summary: 'run the rules: broker → rules → sinks, ack after commit',
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, 'grace-ms': { type: 'string' }, drain: { type: 'boolean' }, transient: { type: 'boolean' } }, HELP);
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config);
    if (!cfg) return 1;
    const log = createLogger(process.env.WEIR_LOG_LEVEL ?? cfg.logLevel, 1, cfg.logFormat);
    if (cfg.migrateOnStart) {
      try {
        await migrateSinks(migratableSinks(cfg), {}, (s, r) =>
          log.info({ sink: s.name, applied: r.applied, notes: r.notes.length ? r.notes : undefined }, 'migrations applied'),
        );
      } catch (err) {
        log.error({ err: redactUrl(errorText(err)) }, 'migrations failed; not starting');
        return 1;
      }
    }
    // What the rules need and a sink lacks (a table, a column): said now, at error level, with
    // the rule file and line, rather than only as the retries of the first write.
    await logSinkProblems(cfg, log);
    const session = p.values.transient ? 'transient' : 'persistent';
    logSessionNotice(cfg, session, log);
    let runtime: Runtime | undefined;
    try {
      // Creating the sinks can throw too (a setting the loader let through would be a bug there):
      // the error is logged, never a stack trace.
      runtime = new Runtime(cfg, log, { session });
      await runtime.start();
    } catch (err) {
      log.error({ err: redactUrl(errorText(err)) }, 'start failed');
      await runtime?.stop({ graceMs: 0 });
      return 1;
    }
    const graceMs = Number(p.values['grace-ms'] ?? 30_000);
    const watcher = watchRules(runtime, cfg.rulesDir, log);
    const code = await new Promise<number>((resolve) => {
      const stop = (signal: string) => {
        log.info({ signal }, 'signal received');
        watcher.close();
        runtime.stop({ graceMs, endSession: Boolean(p.values.drain) }).then(
          () => resolve(0),
          (err: unknown) => {
            log.error({ err: errorText(err) }, 'shutdown failed');
            resolve(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
    // Everything weir opened is closed now; a handle a library left behind (a retry timer, a
    // socket still connecting) must not keep a stopped weir alive until the orchestrator's
    // SIGKILL, which would make a clean stop look like a crash. Name it, then exit.
    setTimeout(() => {
      log.warn({ handles: process.getActiveResourcesInfo() }, 'stopped, but open handles keep the process alive; exiting');
      process.exit(code);
    }, EXIT_WAIT_MS).unref();
    return code;
  },
};
