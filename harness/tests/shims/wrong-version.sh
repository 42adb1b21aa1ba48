#!/bin/sh
# A backend that speaks protocol version 99: it answers the hello, then reads until the end.
read -r hello
echo '{"type":"hello","protocol":99,"name":"future","version":"9.9","capabilities":["options"]}'
cat >/dev/null
