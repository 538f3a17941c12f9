"""Runs a command on a pseudo-terminal and types an answer at each prompt.

    typing.py ANSWER... -- COMMAND ARG...

Each time the command's output ends with ": " (a prompt), the next ANSWER is typed, then
Enter. Prints everything the command wrote to the terminal, and exits with its status.
"""
import os
import pty
import select
import sys

split = sys.argv.index("--")
answers, command = sys.argv[1:split], sys.argv[split + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(command[0], command)
transcript = b""
pending = b""
while True:
    ready, _, _ = select.select([fd], [], [], 20)
    if not ready:
        break
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    transcript += chunk
    pending += chunk
    if pending.endswith(b": ") and answers:
        os.write(fd, answers.pop(0).encode() + b"\n")
        pending = b""
_, status = os.waitpid(pid, 0)
sys.stdout.write(transcript.decode("utf-8", "replace").replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status))
