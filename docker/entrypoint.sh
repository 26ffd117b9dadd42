#!/bin/sh
# Container entrypoint (spec 1 §Deployment contract): dispatches to the one `svc` executable.
#   (no arguments)                               → svc gateway           (start the gateway)
#   issue-key | revoke-key | rotate-key | list-keys → svc gateway <command> ...
#   backup | restore                             → svc gateway <command> ... (honours SVC_GATEWAY_DB_PATH)
#   -h | --help | -v | --version                 → svc <flag>
#   any other flag (--port 8422, --host ...)     → svc gateway <flags>   (gateway options)
#   any other word (serve, forward, analytics …) → svc <word> ...
# `exec` replaces this shell, so node is the process that receives SIGTERM/SIGINT (no shell in between).
set -eu

svc="${SVC_BIN:-/app/bin/svc}"

if [ "$#" -eq 0 ]; then
  exec "$svc" gateway
fi

case "$1" in
  issue-key | revoke-key | rotate-key | list-keys | backup | restore)
    exec "$svc" gateway "$@"
    ;;
  -h | --help | -v | --version)
    exec "$svc" "$@"
    ;;
  -*)
    exec "$svc" gateway "$@"
    ;;
  *)
    exec "$svc" "$@"
    ;;
esac
