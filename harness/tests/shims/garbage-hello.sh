#!/bin/sh
# A backend that greets with garbage; it counts its starts in the file named by $1.
echo start >>"$1"
read -r hello
echo 'hello? is this JSON?'
cat >/dev/null
