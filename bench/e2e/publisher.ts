// The load of the end-to-end benchmarks: the load generator (test/harness/load/publisher.ts) as its
// own process on the load side, never in a measured event loop.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../test/harness/weir.js';
import { PLACEMENT } from './placement.js';
import { DEVICES, PUB_CLIENTS, WEIR_TOPICS } from './settings.js';

export interface Published {
  published: number;
  acked: number;
  msgs_per_s: number;
  /** Epoch ms just before the first publish and after the last acknowledgement: every payload's `ts` lies between. */
  startedAt: number;
  endedAt: number;
  /** The publisher process's CPU time, start-up included. */
  cpu_ms: number;
}

/** Runs the publisher as its own process on the load side (never in a measured event loop). */
export function publish(url: string, limit: number, size: number, topics = WEIR_TOPICS): Promise<Published> {
  const args = [
    '--import',
    'tsx',
    join(ROOT, 'test/harness/load/publisher.ts'),
    '-h',
    url,
    '-c',
    String(PUB_CLIENTS),
    '--devices',
    String(DEVICES),
    '-s',
    String(size),
    '-q',
    '1',
    '-L',
    String(limit),
    '-t',
    topics,
  ];
  const [cmd, argv] = PLACEMENT ? ['taskset', ['-c', PLACEMENT.load, process.execPath, ...args]] : [process.execPath, args];
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`publisher exited ${code}`))));
  });
}
