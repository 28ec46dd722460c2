#!/usr/bin/env bash
# Copies the jars of a Pulsar standalone broker from Maven Central into .it/pulsar/lib (git-ignored),
# keyed by the hash of pom.xml + settings.xml (.it/pulsar/lib/.fetched): ../fetch-jars.sh says how.
# Maven's own cache (~/.m2) makes a re-fetch after a pom change cheap.
# Usage: bash test/brokers/pulsar/fetch.sh [--force]   (from anywhere; prints the lib dir on success)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/../fetch-jars.sh"
[[ "${1:-}" == "--force" ]] && FORCE=1
lib="$root/.it/pulsar/lib"
version="$(sed -n 's#.*<pulsar.version>\(.*\)</pulsar.version>.*#\1#p' "$here/pom.xml")"

# settings.xml routes every repository to Maven Central: Pulsar's POMs also name the Confluent
# and Restlet repositories, which are unreachable here and would only slow resolution down.
fetch_jars pulsar "$lib" "$(cat "$here/pom.xml" "$here/settings.xml" | sha256sum | cut -d' ' -f1)" .fetched "pulsar-broker-$version.jar" \
  -- -s "$here/settings.xml" -f "$here/pom.xml"
echo "$lib"
