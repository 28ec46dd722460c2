#!/usr/bin/env bash
# Resolves the Kafka broker's jars from Maven Central (through ~/.m2) into .it/kafka/lib.
# Idempotent and cheap when nothing changed: the copy is keyed by the sha256 of pom.xml, kept in
# .it/kafka/lib/.pom.sha256, and skipped while it matches. Safe to run from parallel test processes
# (flock). Usage: bash test/brokers/kafka/fetch.sh [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
pom="$here/pom.xml"
out="$root/.it/kafka"
lib="$out/lib"
mkdir -p "$out"

want="$(sha256sum "$pom" | cut -d' ' -f1)"
cached() { [[ -f "$lib/.pom.sha256" && "$(cat "$lib/.pom.sha256")" == "$want" ]] && compgen -G "$lib/kafka_2.13-*.jar" >/dev/null; }

if [[ "${1:-}" != "--force" ]] && cached; then exit 0; fi

exec 9>"$out/.fetch.lock"
flock 9
# Another process may have finished the copy while this one waited for the lock.
if [[ "${1:-}" != "--force" ]] && cached; then exit 0; fi

tmp="$(mktemp -d "$out/lib.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
echo "kafka: resolving broker jars from Maven Central into $lib" >&2
mvn -B -ntp -q -f "$pom" \
  org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$tmp" >&2

# The two main classes the harness runs; they have lived in kafka_2.13 (the Scala core) up to
# 4.4.0 and will move one day: fail here, loudly, rather than with a ClassNotFoundException later.
core="$(compgen -G "$tmp/kafka_2.13-*.jar" | head -n1 || true)"
[[ -n "$core" ]] || { echo "kafka: no kafka_2.13 jar was resolved" >&2; exit 1; }
for cls in kafka/Kafka.class kafka/tools/StorageTool.class; do
  unzip -l "$core" "$cls" >/dev/null 2>&1 || { echo "kafka: $cls is not in $(basename "$core")" >&2; exit 1; }
done

echo "$want" >"$tmp/.pom.sha256"
rm -rf "$lib"
mv "$tmp" "$lib"
trap - EXIT
echo "kafka: $(ls "$lib"/*.jar | wc -l) jars, $(du -sh "$lib" | cut -f1)" >&2
