#!/bin/sh
# A backend whose hello names no profiles (so it supports the documented one only); it reads
# until the end and answers nothing else.
read -r hello
echo '{"type":"hello","protocol":2,"name":"documented-only","version":"1","capabilities":["options"]}'
cat >/dev/null
