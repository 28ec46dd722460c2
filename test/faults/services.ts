// The faults the harness does not offer itself, in one place: a PostgreSQL crash, and brokers
// that keep their state across a restart (Mosquitto with persistence, HiveMQ CE) for the broker
// scenarios.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { query } from '../e2e/fixtures.js';
import { startHivemq } from '../harness/hivemq.js';
import { startMosquitto } from '../harness/mosquitto.js';
import type { PostgresServer } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';

/**
 * `pg_ctl stop -m immediate`: SIGQUIT to the postmaster, which ends every backend at once without
 * a checkpoint, so the next start runs crash recovery. (pg_ctl itself refuses to run as root, as
 * CI does; the signal is what it sends.) The caller starts the server again with `start()`.
 */
export async function crashPostgres(server: PostgresServer): Promise<void> {
  const [row] = await query<{ data_directory: string }>(server.url, 'SHOW data_directory');
  const pid = Number(readFileSync(join(row!.data_directory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGQUIT');
  await waitFor(
    () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    30_000,
    `the postmaster (${pid}) to exit`,
  );
}

export type BrokerName = 'mosquitto' | 'hivemq';

/** A broker of the scenario's own, whose state (sessions, queues) survives a restart. */
export interface RestartableBroker {
  readonly url: string;
  /** A graceful stop: the broker saves its state and exits. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGKILL: the broker keeps only what it had saved. */
  kill(): Promise<void>;
  dispose(): Promise<void>;
}

export async function startRestartableBroker(name: BrokerName): Promise<RestartableBroker> {
  return name === 'hivemq' ? startHivemq() : startMosquitto({ persistence: true });
}
