#!/bin/sh
# Starts a helper that leaves the backend's process group ($1: `setpgid` for a group of its
# own, `setsid` for a session of its own), records the helper's pid in $2, then serves the
# reference ($3...): killing the backend's group does not reach the helper, and it must not
# outlive the run all the same.
how=$1
pidfile=$2
shift 2
python3 -c '
import os, sys, time
if sys.argv[1] == "setsid":
    os.setsid()
else:
    os.setpgid(0, 0)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(3600)
' "$how" "$pidfile" &
# Served once the helper is out of the group, so that the run cannot end before it escapes
# (or after five seconds, when it could not record its pid).
tries=0
while [ ! -s "$pidfile" ] && [ "$tries" -lt 100 ]; do
    sleep 0.05
    tries=$((tries + 1))
done
exec "$@"
