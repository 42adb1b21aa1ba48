#!/bin/sh
# Starts a helper process in its own process group, records the helper's pid in $1, then
# serves the reference ($2...): the helper must not outlive the run.
pidfile=$1
shift
sleep 3600 &
echo $! > "$pidfile"
exec "$@"
