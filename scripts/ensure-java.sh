#!/usr/bin/env bash
# Install a Java runtime for the Spark tests (PySpark 4 needs Java 17 or newer) when none is on
# the PATH. Needs root, as CI and dev boxes have.
set -euo pipefail
if command -v java >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "java is not installed and this is not root: the Spark tests will fail" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
