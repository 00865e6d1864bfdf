# Sourced by scripts/run and .ci/run: makes sure JAVA_HOME points at a JDK 25 or newer.
# Order: $JAVA_HOME, the `java` on PATH, then the usual install locations.

strata_java_major() { # prints the feature version of the java binary $1, or 0
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | cut -d. -f1 | head -1 || echo 0
}

strata_use_jdk25() {
  local candidates=() c major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  candidates+=(/usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-arm64 /usr/lib/jvm/java-25-openjdk-amd64
               /usr/lib/jvm/java-25-openjdk-arm64 /usr/lib/jvm/jdk-25* /usr/lib/jvm/*-25* /opt/java/openjdk
               /Library/Java/JavaVirtualMachines/*25*/Contents/Home "$HOME"/.sdkman/candidates/java/25*)
  for c in "${candidates[@]}"; do
    [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] || continue
    major=$(strata_java_major "$c/bin/java")
    if [ "${major:-0}" -ge 25 ] 2>/dev/null; then
      export JAVA_HOME="$c"
      export PATH="$JAVA_HOME/bin:$PATH"
      return 0
    fi
  done
  echo "Strata needs JDK 25 or newer (javac included). Install one (e.g. Temurin 25) and set JAVA_HOME." >&2
  return 1
}
