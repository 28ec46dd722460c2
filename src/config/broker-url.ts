// The broker URL schemes weir's MQTT session speaks (core/ingest/mqtt-session.ts opens the socket by this
// table), and the check `weir check` and `weir run` make of broker.url before connecting.
import { urlProblem } from './url-check.js';

/** Scheme → transport. ssl: and tls: are MQTT.js's names for mqtts:, accepted as they are there. */
export const BROKER_SCHEMES: Readonly<Record<string, 'tcp' | 'tls'>> = Object.freeze({ 'mqtt:': 'tcp', 'mqtts:': 'tls', 'ssl:': 'tls', 'tls:': 'tls' });

/** What is wrong with broker.url, or undefined. */
export function brokerUrlProblem(text: string): string | undefined {
  return urlProblem(text, { schemes: Object.keys(BROKER_SCHEMES), expected: 'mqtt:// or mqtts:// (TLS)', example: 'mqtt://broker:1883' });
}
