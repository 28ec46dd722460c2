# Sourced by each broker's fetch.sh: resolves a broker's jars from Maven Central (through ~/.m2)
# into a lib directory, once. Idempotent and cheap when nothing changed: the copy is keyed by a hash
# of the broker's Maven files, kept in a marker file inside the lib directory, and skipped while it
# matches. Safe to run from parallel test processes (flock). The new copy is made beside the old
# one and moved in whole, so a failed or interrupted fetch leaves the last good one.
#
#   fetch_jars NAME LIB KEY MARKER JAR_GLOB [CLASS...] -- MVN_ARGS...
#
# JAR_GLOB names the broker's main jar, which must be resolved and hold each CLASS the harness runs
# (classes move between releases: fail here, loudly, rather than with a ClassNotFoundException
# later). MVN_ARGS: -f pom.xml, and -s settings.xml where one is needed. FORCE=1 fetches anyway.

fetch_jars() {
  local name=$1 lib=$2 key=$3 marker=$4 glob=$5
  shift 5
  local classes=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    classes+=("$1")
    shift
  done
  [[ $# -gt 0 ]] && shift
  cached() { [[ -f "$lib/$marker" && "$(cat "$lib/$marker")" == "$key" ]] && compgen -G "$lib/$glob" >/dev/null; }
  if [[ "${FORCE:-0}" != 1 ]] && cached; then return 0; fi

  mkdir -p "$(dirname "$lib")"
  exec 9>"$(dirname "$lib")/.fetch.lock"
  flock 9
  # Another process may have finished the copy while this one waited for the lock.
  if [[ "${FORCE:-0}" != 1 ]] && cached; then return 0; fi

  tmp="$(mktemp -d "$lib.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"
  echo "$name: resolving broker jars from Maven Central into $lib" >&2
  mvn -B -ntp -q -Dstyle.color=never "$@" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp" >&2
  local core
  core="$(compgen -G "$tmp/$glob" | head -n1 || true)"
  [[ -n "$core" ]] || { echo "$name: no $glob was resolved" >&2; exit 1; }
  for cls in "${classes[@]}"; do
    unzip -l "$core" "$cls" >/dev/null 2>&1 || { echo "$name: $cls is not in $(basename "$core")" >&2; exit 1; }
  done
  echo "$key" >"$tmp/$marker"
  rm -rf "$lib"
  mv "$tmp" "$lib"
  trap - EXIT
  echo "$name: $(ls "$lib"/*.jar | wc -l) jars, $(du -sh "$lib" | cut -f1)" >&2
}
