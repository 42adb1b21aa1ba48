#!/usr/bin/env python3
"""A deliberately misbehaving protocol backend for the client's robustness tests.

    misbehave.py MODE TRIGGER -- BACKEND COMMAND...

Starts BACKEND and relays the protocol between the harness and it, except for requests whose
line contains TRIGGER, where it misbehaves as MODE says:

    crash         exits with status 3 without answering
    hang          never answers
    garbage       answers a line that is not JSON
    wrong-id      relays the answer with another request id
    close-stdout  closes its standard output and keeps running
    error         answers a protocol error (the session stays in step)
    huge-error    answers a protocol error of 32 MiB, a forged verdict line over and over
    blank-flood   writes blank lines, forever, instead of an answer
    extra-line    relays the answer, then writes it a second time
    many-entries  relays the answer with 140,000 empty objects after its last member (a line
                  of 420 KB, past the entries an answer may hold)
    not-utf8      relays the answer with a byte that is not UTF-8 in it
    huge-line     answers one line of 64 MiB, longer than the protocol allows
    write-tmpdir  relays the answer, then leaves a file in its $TMPDIR
    flood-tmpdir  relays the answer, then leaves 10,001 empty files in its $TMPDIR (the first
                  time) and a file of its own per request, as write-tmpdir
    fill-tmpdir   relays the answer, then writes $MISBEHAVE_BYTES bytes (real ones, not a hole)
                  into a file of its $TMPDIR
    write-beside-tmpdir
                  relays the answer, then writes a file beside its $TMPDIR ($TMPDIR/..), beneath
                  the sandbox root, where Landlock lets it
    hide-beside   write-beside-tmpdir, then takes read permission from the directory holding
                  $TMPDIR and from the one holding its sandbox (`chmod 0300`: write and search
                  only), so that listing them fails
    flood-beside  write-beside-tmpdir after 10,001 empty files in its $TMPDIR (the first time)
    write-outside relays the answer, then writes a file into $MISBEHAVE_OUTSIDE (an absolute
                  path outside the sandbox)
    through-link  relays the answer, then writes into $MISBEHAVE_OUTSIDE through a link it
                  makes in the sandbox, and removes the link
    write-proc    relays the answer, then writes 1 into the harness's /proc/<ppid>/oom_score_adj
    make-device   relays the answer, then makes a character device node (the null device's
                  numbers) in its sandbox and says on standard error whether it could
    connect-tcp   relays the answer, then connects to 127.0.0.1:$MISBEHAVE_PORT and says on
                  standard error whether it could
    open-tty      relays the answer, then opens /dev/tty (the controlling terminal) and says on
                  standard error whether it could
    signal-harness
                  relays the answer, then sends the harness signal 0 (a probe that changes
                  nothing) and says on standard error whether it went through
    flood-sandbox makes 10,001 links in the request's sandbox, then relays the request and its
                  answer (which is right, and lists none of them)
    write-inherited
                  at start, writes a line into every descriptor from 3 up that it inherited, and
                  says on standard error which it could (TRIGGER unused)
    limit-harness relays the answer, then sets the harness's core-file limit to what it already
                  is (a probe that changes nothing) and says whether it could
    nice-harness  relays the answer, then sets the harness's priority to what it already is and
                  says whether it could
    capabilities  relays the answer, then says on standard error which capabilities it holds
                  (its CapEff, CapPrm and CapBnd lines of /proc/self/status)
    sysv-shm      relays the answer, then makes a System V shared memory segment of key
                  $MISBEHAVE_KEY and leaves it, saying whether it could
    fat-hello     relays the hello with its name padded past 64 KiB (TRIGGER unused)
    late-hello    sleeps $MISBEHAVE_DELAY seconds before relaying the hello (TRIGGER unused)
    slow          sleeps $MISBEHAVE_DELAY seconds, then relays the request and its answer
    zero-offsets  relays the answer with every tensor of a memory plan at offset 0, as a
                  planner that shares the bytes of tensors in use at once would
    huge-trace    relays a session answer with its trace repeated to 200,000 entries

With MISBEHAVE_PIDFILE set, it appends its process id to that file when it starts.
"""

import json
import socket
import stat
import os
import subprocess
import sys
import time


def main():
    mode, trigger, sep, *backend = sys.argv[1:]
    assert sep == "--" and backend, __doc__
    if os.environ.get("MISBEHAVE_PIDFILE"):
        with open(os.environ["MISBEHAVE_PIDFILE"], "a") as f:
            f.write(f"{os.getpid()}\n")
    if mode == "write-inherited":
        for fd in sorted(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2):
            try:
                os.write(fd, b"written through an inherited descriptor\n")
                sys.stderr.write("misbehave: write-inherited went through fd %d\n" % fd)
            except OSError:
                pass
    child = subprocess.Popen(backend, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        if mode == "late-hello" and '"hello"' in line:
            time.sleep(float(os.environ.get("MISBEHAVE_DELAY", "5")))
        if trigger in line and '"request"' in line:
            sys.stderr.write(f"misbehave: {mode} on purpose\n")
            sys.stderr.flush()
            if mode == "crash":
                os._exit(3)
            if mode == "flood-sandbox":
                request = json.loads(line)
                if request.get("sandbox"):
                    flood = os.path.join(request["sandbox"], "flood")
                    os.mkdir(flood)
                    for i in range(10001):
                        os.symlink("/nowhere", os.path.join(flood, str(i)))
            if mode == "slow":
                time.sleep(float(os.environ.get("MISBEHAVE_DELAY", "5")))
            if mode == "hang":
                time.sleep(3600)
            if mode == "garbage":
                sys.stdout.write("this is not a protocol message {{{\n")
                sys.stdout.flush()
                continue
            if mode == "close-stdout":
                sys.stdout.flush()
                os.close(1)
                for _ in sys.stdin:
                    pass
                return
            if mode == "blank-flood":
                while True:
                    sys.stdout.write("\n" * 1024)
                    sys.stdout.flush()
            if mode == "huge-line":
                chunk = "x" * (1 << 20)
                for _ in range(65):
                    sys.stdout.write(chunk)
                sys.stdout.write("\n")
                sys.stdout.flush()
                continue
            if mode in ("error", "huge-error"):
                rid = line.split('"id":', 1)[1].split(",", 1)[0]
                why = "misbehave: refused"
                if mode == "huge-error":
                    why += "\\nCERTIFIED at level documented" * ((32 << 20) // 32)
                sys.stdout.write('{"type":"error","id":%s,"message":"%s"}\n' % (rid, why))
                sys.stdout.flush()
                continue
        child.stdin.write(line)
        child.stdin.flush()
        answer = child.stdout.readline()
        if mode == "fat-hello" and '"hello"' in line:
            hello = json.loads(answer)
            hello["name"] = "x" * (65 << 10)
            answer = json.dumps(hello) + "\n"
        if mode == "many-entries" and trigger in line and '"request"' in line:
            answer = answer.rstrip("\n")[:-1] + ',"padding":[' + ",".join(["{}"] * 140000) + "]}\n"
        if mode == "not-utf8" and trigger in line and '"request"' in line:
            sys.stdout.flush()
            sys.stdout.buffer.write(answer.replace('"type"', '"ty\udcffpe"', 1).encode("utf-8", "surrogateescape"))
            sys.stdout.buffer.flush()
            continue
        if mode == "wrong-id" and trigger in line and '"request"' in line:
            head, tail = answer.split('"id":', 1)
            number, rest = tail.split(",", 1)
            answer = '%s"id":%d,%s' % (head, int(number) + 1000, rest)
        if mode == "zero-offsets" and trigger in line and '"request"' in line:
            message = json.loads(answer)
            observation = message.get("observation") or {}
            if observation.get("capability") == "memory":
                observation["offsets"] = {name: 0 for name in observation.get("offsets", {})}
                answer = json.dumps(message) + "\n"
        if mode == "huge-trace" and trigger in line and '"request"' in line:
            message = json.loads(answer)
            observation = message.get("observation") or {}
            trace = observation.get("trace") or []
            if observation.get("capability") == "session" and trace:
                observation["trace"] = (trace * (200000 // len(trace) + 1))[:200000]
                answer = json.dumps(message) + "\n"
        sys.stdout.write(answer)
        if mode == "extra-line" and trigger in line and '"request"' in line:
            sys.stdout.write(answer)
        sys.stdout.flush()
        if trigger in line and '"request"' in line:
            write_outside(mode, json.loads(line))


def write_outside(mode, request):
    """Writes where a backend must not, once the answer is out; failures are ignored, as a
    careless engine would."""
    name = "stray-%d" % request["id"]
    try:
        if mode in ("write-tmpdir", "flood-tmpdir"):
            tmp = os.environ["TMPDIR"]
            if mode == "flood-tmpdir" and not os.path.exists(os.path.join(tmp, "flood")):
                os.mkdir(os.path.join(tmp, "flood"))
                for i in range(10001):
                    open(os.path.join(tmp, "flood", str(i)), "w").close()
            with open(os.path.join(tmp, name), "w") as f:
                f.write("an index nobody asked for\n")
        elif mode == "fill-tmpdir":
            with open(os.path.join(os.environ["TMPDIR"], name), "wb") as f:
                f.write(b"x" * int(os.environ.get("MISBEHAVE_BYTES", "1048576")))
        elif mode in ("write-beside-tmpdir", "hide-beside", "flood-beside"):
            tmp = os.environ["TMPDIR"]
            if mode == "flood-beside" and not os.path.exists(os.path.join(tmp, "flood")):
                os.mkdir(os.path.join(tmp, "flood"))
                for i in range(10001):
                    open(os.path.join(tmp, "flood", str(i)), "w").close()
            with open(os.path.join(tmp, "..", name), "w") as f:
                f.write("a file nobody asked for\n")
            if mode == "hide-beside":
                os.chmod(os.path.join(tmp, ".."), 0o300)
                os.chmod(os.path.join(request["sandbox"], ".."), 0o300)
        elif mode == "write-outside":
            with open(os.path.join(os.environ["MISBEHAVE_OUTSIDE"], name), "w") as f:
                f.write("outside\n")
        elif mode == "through-link":
            link = os.path.join(request["sandbox"], "escape")
            os.symlink(os.environ["MISBEHAVE_OUTSIDE"], link)
            try:
                with open(os.path.join(link, name), "w") as f:
                    f.write("through a link\n")
            finally:
                os.remove(link)
        elif mode == "write-proc":
            with open("/proc/%d/oom_score_adj" % os.getppid(), "w") as f:
                f.write("1\n")
        elif mode == "make-device":
            node = os.path.join(request["sandbox"], "device-%d" % request["id"])
            os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
            sys.stderr.write("misbehave: make-device went through\n")
            os.remove(node)
        elif mode == "connect-tcp":
            with socket.create_connection(("127.0.0.1", int(os.environ["MISBEHAVE_PORT"])), 2):
                sys.stderr.write("misbehave: connect-tcp went through\n")
        elif mode == "open-tty":
            os.close(os.open("/dev/tty", os.O_RDONLY))
            sys.stderr.write("misbehave: open-tty went through\n")
        elif mode == "limit-harness":
            import resource
            limit = resource.prlimit(os.getppid(), resource.RLIMIT_CORE)
            resource.prlimit(os.getppid(), resource.RLIMIT_CORE, limit)
            sys.stderr.write("misbehave: limit-harness went through\n")
        elif mode == "nice-harness":
            now = os.getpriority(os.PRIO_PROCESS, os.getppid())
            os.setpriority(os.PRIO_PROCESS, os.getppid(), now)
            sys.stderr.write("misbehave: nice-harness went through\n")
        elif mode == "capabilities":
            with open("/proc/self/status") as f:
                held = [l.strip() for l in f if l.startswith(("CapEff", "CapPrm", "CapBnd"))]
            sys.stderr.write("misbehave: capabilities %s\n" % " ".join(held))
        elif mode == "sysv-shm":
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            # IPC_CREAT | 0600
            made = libc.shmget(int(os.environ["MISBEHAVE_KEY"]), 4096, 0o1000 | 0o600)
            if made == -1:
                raise OSError(ctypes.get_errno(), "shmget")
            sys.stderr.write("misbehave: sysv-shm went through\n")
        elif mode == "signal-harness":
            os.kill(os.getppid(), 0)
            sys.stderr.write("misbehave: signal-harness went through\n")
    except OSError as e:
        sys.stderr.write("misbehave: %s failed: %s\n" % (mode, e))


if __name__ == "__main__":
    main()
