// The zstd codec (@bokuweb/zstd-wasm), initialised once per process for every sink that uses it.
// Its init() instantiates the WebAssembly module anew on each call and can resolve before the new
// instance has replaced the old one, so a second init() while the first instance is in use (a
// Kafka and a Pulsar sink both compressing with zstd, or a test calling it beside a sink) swaps
// the memory under a running compress: frames came out as zeros (test/sinks/pulsar-codecs.test.ts,
// about one run in nine before this). One memoised load closes that.
type Zstd = typeof import('@bokuweb/zstd-wasm');

let loading: Promise<Zstd> | undefined;

export function loadZstd(): Promise<Zstd> {
  loading ??= (async () => {
    const zstd = await import('@bokuweb/zstd-wasm');
    await zstd.init();
    return zstd;
  })();
  return loading;
}
