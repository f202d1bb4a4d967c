# Sourced by the scripts that start servers and read their start-up lines.
# wait_for_line FILE PATTERN   returns once FILE holds a line matching the grep pattern PATTERN,
#   polling every 0.1 s for at most 60 s; then prints FILE and `error: …` on stderr and exits 1.
wait_for_line() {
  for _ in $(seq 600); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$1" >&2 || true
  echo "error: no '$2' in $1 within 60 s" >&2
  exit 1
}
