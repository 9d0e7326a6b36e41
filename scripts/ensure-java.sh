#!/bin/sh
# Make sure a Java runtime >= 17 is on PATH (pyspark 4 needs it): exit 0 if `java -version`
# reports 17 or newer, else install Debian's openjdk-17-jre-headless with apt-get (through
# `sudo -n` when not root) and check again; fail with a clear message if that cannot be done.
set -u

java_major() {
    command -v java >/dev/null 2>&1 || { echo 0; return; }
    # `java -version` prints e.g. 'openjdk version "17.0.15" 2025-04-15' (or "1.8.0_392")
    version=$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
    case "$version" in
        1.*) echo "$version" | cut -d. -f2 ;;
        "") echo 0 ;;
        *) echo "$version" | cut -d. -f1 | cut -d- -f1 ;;
    esac
}

major=$(java_major)
if [ "$major" -ge 17 ] 2>/dev/null; then
    exit 0
fi
echo "ensure-java: need Java >= 17 for Spark, found ${major:-none}; installing openjdk-17-jre-headless" >&2

if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root="sudo -n"
else
    echo "ensure-java: cannot install Java: not root and no password-less sudo." >&2
    echo "ensure-java: install a Java 17+ runtime (e.g. apt-get install openjdk-17-jre-headless) and put java on PATH." >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-java: cannot install Java: no apt-get here; install a Java 17+ runtime by hand." >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! { $as_root apt-get update -q && $as_root apt-get install -y -q --no-install-recommends openjdk-17-jre-headless; }; then
    echo "ensure-java: apt-get could not install openjdk-17-jre-headless." >&2
    exit 1
fi

major=$(java_major)
if [ "$major" -ge 17 ] 2>/dev/null; then
    exit 0
fi
echo "ensure-java: openjdk-17-jre-headless is installed but 'java -version' reports ${major:-none}; check PATH / update-alternatives." >&2
exit 1
