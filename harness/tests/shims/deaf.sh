#!/bin/sh
# Greets, then never reads its input again (nor answers): a request larger than the pipe's
# buffer can never be written to it.
read -r hello
echo '{"type":"hello","protocol":2,"name":"deaf","version":"0","capabilities":["options"]}'
exec sleep 3600
