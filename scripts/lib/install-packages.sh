# Sourced by scripts/setup and the scripts that need a system package of their own.
# install_packages WHO NAME...   installs Debian packages NAME... with apt-get (after one
#   `apt-get update`): itself when root, with password-less sudo otherwise; when neither is
#   possible prints the exact command and exits 1. WHO prefixes the progress line. Nothing
#   happens without a NAME.
install_packages() {
  local who="$1"
  shift
  [ $# -gt 0 ] || return 0
  local apt_get
  if [ "$(id -u)" = 0 ]; then
    apt_get=(apt-get)
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_get=(sudo apt-get)
  else
    echo "error: missing system packages: $*" >&2
    echo "install them with:  sudo apt-get update && sudo apt-get install -y $*" >&2
    exit 1
  fi
  echo "$who: installing $*" >&2
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq --no-install-recommends "$@" >/dev/null
}
