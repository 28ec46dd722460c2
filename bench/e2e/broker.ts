// The benchmarks' MQTT broker: Mosquitto 2.0.21 built from Debian's source (test/harness/mosquitto-build.ts
// says why not Debian 12's 2.0.11 package), or the package with BENCH_MOSQUITTO=debian. Its version
// goes into every result.
import { builtMosquitto, mosquittoVersion } from '../../test/harness/mosquitto-build.js';
import { type MosquittoBroker, mosquittoBinary, startMosquitto } from '../../test/harness/mosquitto.js';

let version = 'not started';

export async function startBenchMosquitto(): Promise<MosquittoBroker> {
  const bin = process.env.BENCH_MOSQUITTO === 'debian' ? undefined : await builtMosquitto();
  const broker = await startMosquitto({ bin });
  version = mosquittoVersion(bin ?? mosquittoBinary());
  return broker;
}

/** `mosquitto version 2.0.21`: the broker the last startBenchMosquitto() started. */
export function benchBrokerVersion(): string {
  return version;
}
