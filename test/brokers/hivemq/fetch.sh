#!/usr/bin/env bash
# Resolves the embedded HiveMQ CE jars from Maven Central (through ~/.m2) into .it/hivemq/lib and
# compiles Launcher.java against them into .it/hivemq/classes. Idempotent and cheap when nothing
# changed: the jars are keyed by the sha256 of pom.xml (.it/hivemq/lib/.pom.sha256), the classes by
# the sha256 of pom.xml + Launcher.java (.it/hivemq/classes/.src.sha256). Safe to run from parallel
# test processes (flock). Usage: bash test/brokers/hivemq/fetch.sh [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
pom="$here/pom.xml"
src="$here/Launcher.java"
out="$root/.it/hivemq"
lib="$out/lib"
classes="$out/classes"
mkdir -p "$out"

want_lib="$(sha256sum "$pom" | cut -d' ' -f1)"
want_cls="$(cat "$pom" "$src" | sha256sum | cut -d' ' -f1)"
lib_ok() { [[ -f "$lib/.pom.sha256" && "$(cat "$lib/.pom.sha256")" == "$want_lib" ]] && compgen -G "$lib/hivemq-community-edition-embedded-*.jar" >/dev/null; }
cls_ok() { [[ -f "$classes/.src.sha256" && "$(cat "$classes/.src.sha256")" == "$want_cls" && -f "$classes/weir/it/hivemq/Launcher.class" ]]; }

force=0
[[ "${1:-}" == "--force" ]] && force=1
if [[ $force == 0 ]] && lib_ok && cls_ok; then exit 0; fi

exec 9>"$out/.fetch.lock"
flock 9

# Another process may have finished while this one waited for the lock.
if [[ $force == 1 ]] || ! lib_ok; then
  tmp="$(mktemp -d "$out/lib.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"
  echo "hivemq: resolving broker jars from Maven Central into $lib" >&2
  mvn -B -ntp -q -f "$pom" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp" >&2
  core="$(compgen -G "$tmp/hivemq-community-edition-embedded-*.jar" | head -n1 || true)"
  [[ -n "$core" ]] || { echo "hivemq: no hivemq-community-edition-embedded jar was resolved" >&2; exit 1; }
  # The two classes the launcher uses: fail here, loudly, if a release moves them.
  for cls in com/hivemq/embedded/EmbeddedHiveMQ.class com/hivemq/configuration/service/InternalConfigurations.class; do
    unzip -l "$core" "$cls" >/dev/null 2>&1 || { echo "hivemq: $cls is not in $(basename "$core")" >&2; exit 1; }
  done
  echo "$want_lib" >"$tmp/.pom.sha256"
  rm -rf "$lib"
  mv "$tmp" "$lib"
  trap - EXIT
  echo "hivemq: $(ls "$lib"/*.jar | wc -l) jars, $(du -sh "$lib" | cut -f1)" >&2
fi

if [[ $force == 1 ]] || ! cls_ok; then
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
