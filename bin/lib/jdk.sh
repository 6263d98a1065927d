# shellcheck shell=bash
# Sourced by bin/nereid and .ci/run: selects a JDK >= 25 and exports JAVA_HOME.
# Order: $JAVA_HOME, then /usr/lib/jvm/temurin-25-jdk-amd64, then `java` on the PATH.
# Fails with a message that names what is needed and what was found.

NEREID_MIN_JAVA=25

# Prints the feature version of the JDK at $1 (e.g. 25 for "25.0.3", 1 for "1.8.0"), or nothing.
nereid_java_feature() {
  local java="$1/bin/java"
  [ -x "$java" ] || return 0
  "$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

nereid_select_jdk() {
  local tried=() candidate feature on_path
  local candidates=()
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  candidates+=("/usr/lib/jvm/temurin-25-jdk-amd64")
  if on_path=$(command -v java 2>/dev/null); then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$on_path")")")")
  fi
  for candidate in "${candidates[@]}"; do
    feature=$(nereid_java_feature "$candidate")
    if [ -n "$feature" ] && [ "$feature" -ge "$NEREID_MIN_JAVA" ]; then
      export JAVA_HOME="$candidate"
      return 0
    fi
    if [ -n "$feature" ]; then
      tried+=("$candidate (Java $feature)")
    else
      tried+=("$candidate (no java found)")
    fi
  done
  {
    echo "nereid: needs a JDK $NEREID_MIN_JAVA or newer (with the jdk.incubator.vector module), and found none."
    echo "  looked at, in order:"
    printf '    %s\n' "${tried[@]}"
    echo "  Install one (e.g. Temurin 25) and point JAVA_HOME at it."
  } >&2
  return 1
}
