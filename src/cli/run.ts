// weir run: start the pipeline and keep it running until SIGTERM/SIGINT; SIGHUP or an edit in
// the rules directory reloads the rules (core/app/rules-watch.ts).
import { DEFAULT_GRACE_MS, Runtime } from '../core/app/runtime.js';
import { watchRules } from '../core/app/rules-watch.js';
import { errorText } from '../errors.js';
import { createLogger, redactUrl } from '../log.js';
import { migratableSinks } from '../core/app/migrate-sinks.js';
import { logSinkProblems } from '../core/app/log-sink-problems.js';
import { CONFIG_HELP, CONFIG_OPTION, numberOption, parse } from './args.js';
import type { Command } from './command.js';
import { loadOrReport } from './load-or-report.js';
import { logSessionNotice } from './session-notice.js';
import { consoleSequenceCheck } from '../reconcile/console-sequence.js';

/** How long a stopped weir waits for its event loop to empty before it exits anyway. */
export const EXIT_WAIT_MS = 2_000;

const HELP = `usage: weir run [--config FILE] [--grace-ms N] [--drain | --keep-session] [--transient]

Connects to the broker and the sinks and runs the rules until SIGTERM or SIGINT. On those it stops
reading, stores what it read, acks what it stored and disconnects. Whether it keeps its broker
sessions the fleet decides (docs/fleet.md): when another replica of the share group is live it
drains (unsubscribes, finishes, ends its sessions), when it is the last it keeps them, so that a
full stop queues at the broker and a restart loses nothing. SIGHUP, or an edit of a rule file, reloads the rules; an invalid
edit is rejected and the running rules stay (counted in weir_rules_reload_failures_total, its
errors shown on /rules).

${CONFIG_HELP}  --grace-ms N        how long shutdown waits for in-flight messages, in ms (default ${DEFAULT_GRACE_MS})
  --drain             on SIGTERM, always leave the share group for good: unsubscribe, finish,
                      end the broker sessions, whether or not another member is live
  --keep-session      on SIGTERM, always keep the broker sessions (the share of this member
                      queues at the broker until it returns or another member adopts it)
  --transient         connect with clean start and session expiry 0: the broker drops the
                      sessions at disconnect and deals them no messages while weir is away.
                      For a one-off or debugging run beside a share group in production; never
                      for a replica, whose restart would then lose its queue (docs/operations.md)
`;

export const runCommand: Command = {
  summary: 'run the rules: broker → rules → sinks, ack after commit',
  async run(args) {
    const p = parse(
      args,
      {
        ...CONFIG_OPTION,
        'grace-ms': numberOption({ unit: 'milliseconds', min: 0 }),
        drain: { type: 'boolean' },
        'keep-session': { type: 'boolean' },
        transient: { type: 'boolean' },
      },
      HELP,
    );
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config);
    if (!cfg) return 1;
    if (p.values.drain && p.values['keep-session']) {
      process.stderr.write('weir run: --drain and --keep-session contradict each other; give one\n');
      return 2;
    }
    const leave = p.values.drain ? 'drain' : p.values['keep-session'] ? 'keep' : 'auto';
    const log = createLogger(process.env.WEIR_LOG_LEVEL ?? cfg.logLevel, 1, cfg.logFormat);
    const session = p.values.transient ? 'transient' : 'persistent';
    let runtime: Runtime;
    try {
      // Creating the sinks can throw too (a setting the loader let through would be a bug there):
      // the error is logged, never a stack trace.
      runtime = new Runtime(cfg, log, { session, migrate: cfg.migrateOnStart ? migratableSinks(cfg) : [], sequenceCheck: consoleSequenceCheck(cfg) });
    } catch (err) {
      log.error({ err: redactUrl(errorText(err)) }, 'start failed');
      return 1;
    }
    const graceMs = p.values['grace-ms'] ?? DEFAULT_GRACE_MS;
    let watcher: ReturnType<typeof watchRules> | undefined;
    let signalled = false;
    // Signals are taken from here on, so one that comes while weir waits for its database to
    // migrate ends the wait at once (a clean exit 0, not a kill by the default handler).
    const stopped = new Promise<number>((resolve) => {
      const stop = (signal: string) => {
        log.info({ signal }, 'signal received');
        signalled = true;
        watcher?.close();
        runtime.stop({ graceMs, leave }).then(
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
    try {
      // HTTP first; with migrate_on_start the migrations, retried until the database takes them
      // (/readyz not ready meanwhile, saying why); only then do sinks connect and the broker deal.
      if (await runtime.prepare()) {
        // What the rules need and a sink lacks (a table, a column): said now, at error level, with
        // the rule file and line, rather than only as the retries of the first write.
        await logSinkProblems(cfg, log);
        logSessionNotice(cfg, session, log);
        await runtime.start();
        if (!signalled) watcher = watchRules(runtime, cfg.rulesDir, log);
      }
    } catch (err) {
      log.error({ err: redactUrl(errorText(err)) }, 'start failed');
      await runtime.stop({ graceMs: 0 });
      return 1;
    }
    const code = await stopped;
    // Everything weir opened is closed now; a handle a library left behind (a retry timer, a
    // socket still connecting) must not keep a stopped weir alive until the orchestrator's
    // SIGKILL, which would make a clean stop look like a crash. Name it, then exit. A part stop()
    // left behind keeps its socket open, so the loop will not empty: then there is no use waiting.
    setTimeout(
      () => {
        log.warn({ handles: process.getActiveResourcesInfo() }, 'stopped, but open handles keep the process alive; exiting');
        process.exit(code);
      },
      runtime.leftBehind.length ? 0 : EXIT_WAIT_MS,
    ).unref();
    return code;
  },
};
