#!/usr/bin/env bash
# Copies the jars of a Pulsar standalone broker from Maven Central into .it/pulsar/lib (git-ignored).
# Skipped when the jars there were fetched for the same pom.xml + settings.xml (their hash is kept
# in .it/pulsar/lib/.fetched). Maven's own cache (~/.m2) makes a re-fetch after a pom change cheap.
# Usage: bash test/brokers/pulsar/fetch.sh        (from anywhere; prints the lib dir on success)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
lib="$root/.it/pulsar/lib"
key="$(cat "$here/pom.xml" "$here/settings.xml" | sha256sum | cut -d' ' -f1)"

if [[ -f "$lib/.fetched" && "$(cat "$lib/.fetched")" == "$key" ]]; then
  echo "$lib"
  exit 0
fi

tmp="$root/.it/pulsar/lib.tmp.$$"
rm -rf "$tmp"
mkdir -p "$root/.it/pulsar"
# settings.xml routes every repository to Maven Central: Pulsar's POMs also name the Confluent
# and Restlet repositories, which are unreachable here and would only slow resolution down.
mvn -B -ntp -q -Dstyle.color=never -s "$here/settings.xml" -f "$here/pom.xml" \
  org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$tmp" >&2
if [[ ! -f "$tmp/pulsar-broker-$(sed -n 's#.*<pulsar.version>\(.*\)</pulsar.version>.*#\1#p' "$here/pom.xml").jar" ]]; then
  echo "fetch.sh: pulsar-broker jar missing after copy-dependencies" >&2
  exit 1
fi
echo "$key" > "$tmp/.fetched"
rm -rf "$lib"
mv "$tmp" "$lib"
echo "$lib"
