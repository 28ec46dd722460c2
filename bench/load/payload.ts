// Telemetry samples in the seeds' shape, padded to an exact byte size (the `location` field takes
// up the slack, as in seed 002). One definition, in src/ so the shipped `weir demo` has it too.
export { telemetrySample as samplePayload } from '../../src/embedded/devices.js';
