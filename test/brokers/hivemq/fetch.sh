#!/usr/bin/env bash
# Resolves the embedded HiveMQ CE jars from Maven Central (through ~/.m2) into .it/hivemq/lib
# (../fetch-jars.sh, keyed by the sha256 of pom.xml in .it/hivemq/lib/.pom.sha256) and compiles
# Launcher.java against them into .it/hivemq/classes, keyed by the sha256 of pom.xml + Launcher.java
# (.it/hivemq/classes/.src.sha256). Safe to run from parallel test processes (flock).
# Usage: bash test/brokers/hivemq/fetch.sh [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
pom="$here/pom.xml"
src="$here/Launcher.java"
out="$root/.it/hivemq"
lib="$out/lib"
classes="$out/classes"
mkdir -p "$out"

source "$here/../fetch-jars.sh"
[[ "${1:-}" == "--force" ]] && FORCE=1

want_cls="$(cat "$pom" "$src" | sha256sum | cut -d' ' -f1)"
cls_ok() { [[ -f "$classes/.src.sha256" && "$(cat "$classes/.src.sha256")" == "$want_cls" && -f "$classes/weir/it/hivemq/Launcher.class" ]]; }

# The two classes the launcher uses.
fetch_jars hivemq "$lib" "$(sha256sum "$pom" | cut -d' ' -f1)" .pom.sha256 'hivemq-community-edition-embedded-*.jar' \
  com/hivemq/embedded/EmbeddedHiveMQ.class com/hivemq/configuration/service/InternalConfigurations.class -- -f "$pom"

if [[ "${FORCE:-0}" != 1 ]] && cls_ok; then exit 0; fi
exec 9>"$out/.fetch.lock"
flock 9
# Another process may have compiled it while this one waited for the lock.
if [[ "${FORCE:-0}" == 1 ]] || ! cls_ok; then
  tmp="$(mktemp -d "$out/classes.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"
  # javac comes with a JDK; a JRE (openjdk-17-jre-headless, what .ci/run installs) has no javac
  # binary but Debian's still carries the jdk.compiler module, which `java -m` runs.
  if command -v javac >/dev/null; then javac=(javac); else javac=(java -m jdk.compiler/com.sun.tools.javac.Main); fi
  # The jars one by one: only the javac launcher expands `lib/*`, javac.Main run by java does not.
  cp="$(printf '%s:' "$lib"/*.jar)"
  "${javac[@]}" --release 11 -nowarn -cp "${cp%:}" -d "$tmp" "$src" >&2
  echo "$want_cls" >"$tmp/.src.sha256"
  rm -rf "$classes"
  mv "$tmp" "$classes"
  trap - EXIT
fi
