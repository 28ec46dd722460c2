// Telemetry samples in the seeds' shape, padded to an exact byte size: the `location` field takes
// up the slack, as in seed 002 ("location field designed to make the payload 200 B").
export interface Sample {
  device: string;
  seq: number;
  ts: number;
  temp: number;
  hum: number;
  location: string;
}

export function samplePayload(device: string, seq: number, size: number, ts = Date.now()): Buffer {
  const temp = Math.round((15 + ((seq * 7919) % 300) / 10) * 10) / 10;
  const hum = Math.round((30 + ((seq * 104729) % 500) / 10) * 10) / 10;
  const base: Sample = { device, seq, ts, temp, hum, location: '' };
  const bare = Buffer.byteLength(JSON.stringify(base));
  base.location = 'x'.repeat(Math.max(0, size - bare));
  return Buffer.from(JSON.stringify(base));
}
