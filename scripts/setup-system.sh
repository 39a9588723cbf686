#!/usr/bin/env bash
# Install the system packages the course needs, or say exactly what to install where apt-get can't be used.
#   chromium        — browser tests of the built pages (driven by Playwright's Python package)
#   fonts-noto-cjk  — Chinese labels in the figures drawn by matplotlib
#   bubblewrap      — the sandbox `course grade` runs student notebooks in
#   postgresql      — the PostgreSQL server the gradebook tests start in a temporary folder (no service is used)
#   nodejs, npm     — the browser libraries (npm) and the site's search index, built with node at `course build`
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fc-list 2>/dev/null | grep -qi "Noto Sans CJK" || missing+=(fonts-noto-cjk)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system: chromium, fonts-noto-cjk, bubblewrap, postgresql, node and npm are present"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  echo "setup-system: installing ${missing[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" fontconfig >/dev/null
  fc-cache -f >/dev/null 2>&1 || true
  exit 0
fi

echo "setup-system: missing system packages: ${missing[*]}" >&2
if command -v apt-get >/dev/null 2>&1; then
  echo "  install them as root:  sudo apt-get install ${missing[*]}" >&2
else
  echo "  install the equivalents with your package manager (Debian/Ubuntu names: ${missing[*]});" >&2
  echo "  chromium must be on PATH as 'chromium', bubblewrap provides 'bwrap'." >&2
fi
exit 1
