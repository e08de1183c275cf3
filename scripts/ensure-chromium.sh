#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests when it is missing (never Playwright's own
# browser download, which cannot work on these machines). Needs root, as CI and dev boxes have.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "chromium is not installed and this is not root: browser tests will be skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
