#!/usr/bin/env bash
# Install the system packages the course needs, or say exactly what to install where apt-get can't be used.
#   chromium        — browser tests of the built pages and the feedback's diagrams (driven by Playwright's Python
#                     package); `chromium-headless-shell`, the same Chromium without the desktop browser, does it with
#                     about half the CPU per page: wanted, and where it is installed `chromium` is not needed
#   fonts-noto-cjk  — Chinese labels in the figures drawn by matplotlib
#   bubblewrap      — the sandbox `course grade` runs student notebooks in
#   postgresql      — the PostgreSQL server the gradebook tests start in a temporary folder (no service is used)
#   nodejs, npm     — the browser libraries (npm) and the site's search index, built with node at `course build`
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium)
fc-list 2>/dev/null | grep -ci "Noto Sans CJK" >/dev/null || missing+=(fonts-noto-cjk)  # -c reads it all (-q: SIGPIPE)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
wanted=()
command -v chromium-headless-shell >/dev/null 2>&1 || wanted+=(chromium-headless-shell)
install=("${missing[@]}" "${wanted[@]}")  # what to install: the required and the wanted

if [ ${#install[@]} -eq 0 ]; then
  echo "setup-system: Chromium's headless shell, fonts-noto-cjk, bubblewrap, postgresql, node and npm are present"
  exit 0
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  echo "setup-system: installing ${install[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${install[@]}" fontconfig >/dev/null
  fc-cache -f >/dev/null 2>&1 || true
  exit 0
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system: the required packages are present; chromium-headless-shell is not (the browser tests and the"
  echo "  feedback's diagrams use chromium instead, with about twice the CPU per page): sudo apt-get install ${wanted[*]}"
  exit 0
fi

echo "setup-system: missing system packages: ${missing[*]}" >&2
if command -v apt-get >/dev/null 2>&1; then
  echo "  install them as root:  sudo apt-get install ${install[*]}" >&2
else
  echo "  install the equivalents with your package manager (Debian/Ubuntu names: ${install[*]});" >&2
  echo "  chromium must be on PATH as 'chromium', bubblewrap provides 'bwrap'." >&2
fi
exit 1
