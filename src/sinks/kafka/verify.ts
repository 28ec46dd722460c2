// What `weir check --connect` (and `weir run` at start) asks of a Kafka sink: every topic an action
// names exists — unless create_topics is set, when the sink creates it at the first write — and,
// where create_topics says how many partitions a topic should have, that it has them. A topic
// that is a ${path} template is only known per message, so it is not checked.
import { silentLogger } from '../../log.js';
import type { ActionToVerify, VerifyProblem } from '../types.js';
import { withKafkaAdmin } from './count.js';
import type { KafkaAction, KafkaConfig } from './spec.js';

export async function verifyKafka(cfg: KafkaConfig, actions: readonly ActionToVerify[]): Promise<VerifyProblem[]> {
  const fixed = actions.filter((a) => !(a.settings as KafkaAction).topic.includes('${'));
  if (fixed.length === 0) return [];
  return withKafkaAdmin(cfg, silentLogger, async (admin) => {
    const existing = new Set(await admin.listTopics());
    const problems: VerifyProblem[] = [];
    const want = cfg.create_topics?.partitions;
    for (const a of fixed) {
      const topic = (a.settings as KafkaAction).topic;
      const at = `${a.atKey(['topic'])}: rule ${a.ruleId}`;
      if (!existing.has(topic)) {
        if (!cfg.create_topics) {
          problems.push({
            message: `${at}: topic ${topic} does not exist (and create_topics is not set)`,
            suggestion: `kafka-topics.sh --create --topic ${topic} --partitions 6`,
          });
        }
        continue;
      }
      if (want === undefined) continue;
      const meta = await admin.fetchTopicMetadata({ topics: [topic] });
      const n = meta.topics[0]?.partitions.length ?? 0;
      if (n !== want) problems.push({ message: `${at}: topic ${topic} has ${n} partition(s), create_topics.partitions says ${want}` });
    }
    return problems;
  });
}
