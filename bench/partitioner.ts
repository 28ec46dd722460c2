// Kafka partitioner benchmark (npm run bench -- partitioner): the cost per record of choosing a
// partition, weir's partitioner (src/sinks/kafka/partitioner.ts) beside kafkajs's own
// DefaultPartitioner, which implements the same Java-compatible choice (murmur2 of the key,
// toPositive, modulo the partitions; keyless records rotate). Both are run on the same 1,000
// device keys over 12 partitions, three windows each, and must pick the same partitions.
// Writes bench/results/partitioner.json.
import kafkajs, { type ICustomPartitioner, type PartitionMetadata } from 'kafkajs';
import { WeirPartitioner } from '../src/sinks/kafka/partitioner.js';
import { machine, printTable, writeResult } from './report.js';

const RECORDS = 2_000_000;
const META: PartitionMetadata[] = Array.from({ length: 12 }, (_, i) => ({ partitionId: i, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
const MESSAGES = Array.from({ length: 1000 }, (_, i) => ({ key: Buffer.from(`sensor-${String(i).padStart(4, '0')}`), value: Buffer.alloc(200) }));

/** ns per record of the best of three windows, and the sum of the partitions chosen (to compare). */
function measure(factory: ICustomPartitioner): { nsPerRecord: number; checksum: number } {
  const choose = factory();
  let best = Number.POSITIVE_INFINITY;
  let checksum = 0;
  for (let w = 0; w < 3; w++) {
    let sum = 0;
    const t = process.hrtime.bigint();
    for (let i = 0; i < RECORDS; i++) sum += choose({ topic: 't', partitionMetadata: META, message: MESSAGES[i % MESSAGES.length]! });
    best = Math.min(best, Number(process.hrtime.bigint() - t) / RECORDS);
    checksum = sum;
  }
  return { nsPerRecord: best, checksum };
}

export async function benchPartitioner(): Promise<object> {
  const weir = measure(WeirPartitioner);
  const kjs = measure(kafkajs.Partitioners.DefaultPartitioner);
  const rows = [
    { partitioner: 'weir (partitioner.ts)', 'ns/record': weir.nsPerRecord.toFixed(0) },
    { partitioner: 'kafkajs DefaultPartitioner', 'ns/record': kjs.nsPerRecord.toFixed(0) },
  ];
  printTable(rows);
  const result = {
    machine: machine(),
    records: RECORDS,
    samePartitions: weir.checksum === kjs.checksum,
    weirNs: weir.nsPerRecord,
    kafkajsNs: kjs.nsPerRecord,
    ratio: kjs.nsPerRecord / weir.nsPerRecord,
  };
  console.log(`same partitions: ${result.samePartitions}; kafkajs / weir: ${result.ratio.toFixed(1)}×`);
  writeResult('partitioner', result);
  return result;
}
