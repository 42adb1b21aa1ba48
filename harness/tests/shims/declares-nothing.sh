#!/bin/sh
# A backend that greets and declares no capability: there is nothing to certify.
read -r hello
echo '{"type":"hello","protocol":2,"name":"declares-nothing","version":"1","capabilities":[]}'
cat >/dev/null
