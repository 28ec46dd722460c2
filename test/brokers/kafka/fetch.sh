#!/usr/bin/env bash
# Resolves the Kafka broker's jars from Maven Central (through ~/.m2) into .it/kafka/lib, keyed by
# the sha256 of pom.xml (.it/kafka/lib/.pom.sha256): ../fetch-jars.sh says how.
# Usage: bash test/brokers/kafka/fetch.sh [--force]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/../fetch-jars.sh"
[[ "${1:-}" == "--force" ]] && FORCE=1

# The two main classes the harness runs; they have lived in kafka_2.13 (the Scala core) up to 4.4.0.
fetch_jars kafka "$root/.it/kafka/lib" "$(sha256sum "$here/pom.xml" | cut -d' ' -f1)" .pom.sha256 'kafka_2.13-*.jar' \
  kafka/Kafka.class kafka/tools/StorageTool.class -- -f "$here/pom.xml"
