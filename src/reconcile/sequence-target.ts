// Which database each `--sequence` table is read from: a sink of weir.yaml whose type stores rows in
// PostgreSQL (SinkType.sqlTables). The one named by --sink; else the one whose actions write the table
// (the table is there); else the first.
// Every spec is checked against its table before anything is counted, so a typo in a column name
// is reported at once, not after the ledger's count(*) of a large table.
import pg from 'pg';
import type { SinkConfig, WeirConfig } from '../config/types.js';
import { errorText, WeirError } from '../errors.js';
import { checkSequence, planSequence, type SequencePlan, type SequenceResult, type SequenceSpec, type TimeRange } from './sequence.js';
import type { Progress } from './reconcile.js';

export interface SequenceTargets {
  /** Runs every planned check, in the order given. */
  run(progress: Progress): Promise<SequenceResult[]>;
  close(): Promise<void>;
}

export function sequenceSink(cfg: WeirConfig, table: string, name?: string): SinkConfig {
  if (name !== undefined) {
    const s = cfg.sinks.get(name);
    if (!s) throw new WeirError('reconcile.no_sink', `--sink ${name}: ${cfg.file} has no sink of that name`);
    if (!s.sinkType.sqlTables)
      throw new WeirError(
        'reconcile.no_sink',
        `--sink ${name} is a ${s.sinkType.type} sink: --sequence reads a table of a sink that stores rows in PostgreSQL`,
      );
    return s;
  }
  const candidates = [...cfg.sinks.values()].filter((s) => s.sinkType.sqlTables);
  if (!candidates.length) throw new WeirError('reconcile.no_sink', `${cfg.file} has no sink that stores rows in PostgreSQL: --sequence reads a table of one`);
  const writes = (s: SinkConfig) => cfg.rules.some((r) => r.actions.some((a) => a.sink === s.name && s.sinkType.sqlTables!.tableOf(a.settings) === table));
  return candidates.find(writes) ?? candidates[0]!;
}

/** Connects to each spec's sink (once per sink) and plans each check; closes them on failure. */
export async function prepareSequence(
  cfg: WeirConfig,
  specs: readonly SequenceSpec[],
  range: TimeRange,
  sinkName?: string,
  staleAfter?: number,
): Promise<SequenceTargets> {
  const clients = new Map<string, pg.Client>();
  const close = async () => {
    await Promise.all([...clients.values()].map((c) => c.end().catch(() => undefined)));
  };
  const plans: Array<{ client: pg.Client; plan: SequencePlan }> = [];
  try {
    for (const spec of specs) {
      const sink = sequenceSink(cfg, spec.table, sinkName);
      let client = clients.get(sink.name);
      if (!client) {
        client = new pg.Client({ connectionString: sink.sinkType.sqlTables!.url(sink.settings), application_name: 'weir-reconcile' });
        clients.set(sink.name, client);
        await client.connect().catch((err: unknown) => {
          throw new Error(`sink ${sink.name}: cannot connect to PostgreSQL: ${errorText(err)}`, { cause: err });
        });
      }
      plans.push({ client, plan: await planSequence(client, spec, range, staleAfter) });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    async run(progress) {
      const out: SequenceResult[] = [];
      for (const { client, plan } of plans) {
        progress(`checking sequence numbers of ${plan.table}…`);
        out.push(await checkSequence(client, plan));
      }
      return out;
    },
    close,
  };
}
