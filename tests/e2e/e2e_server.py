"""Shared helpers of the Python end-to-end tests: start and stop `slicewright apiserver`, count
checks, and poll conditions with deadlines. Run with /usr/bin/python3 (Debian's, which has
python3-kubernetes); the tests take the slicewright binary as their first argument."""

import http.client
import os
import select
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import traceback

# Under the sanitizers everything runs several times slower: deadlines scale with this.
SLOW = int(os.environ.get("E2E_SLOW", "1"))


class Checks:
    """Counts passed and failed checks and prints them as they happen."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def ok(self, name):
        self.passed += 1
        print("ok   " + name, flush=True)

    def fail(self, name, *details):
        self.failed += 1
        print("FAIL " + name, flush=True)
        for line in details:
            print("       " + str(line), flush=True)

    def check(self, name, condition, *details):
        if condition:
            self.ok(name)
        else:
            self.fail(name, *details)
        return condition

    def eq(self, name, got, want):
        return self.check(name, got == want, "got:  %r" % (got,), "want: %r" % (want,))

    def run(self, name, fn):
        """Runs one scenario; an exception fails it (with its traceback) and the next one runs."""
        try:
            fn()
        except Exception:  # noqa: BLE001 - any failure of a scenario is a failed check
            self.fail(name + ": raised", *traceback.format_exc().splitlines())

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed), flush=True)
        return 0 if self.failed == 0 else 1


def wait_until(seconds, condition, interval=0.02):
    """Polls condition() until it is truthy (returned) or the deadline passes (None)."""
    deadline = time.monotonic() + seconds * SLOW
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def dig(server, name, qtype, *options):
    """One query with the real dig (bind9-dnsutils) to "127.0.0.1:PORT": (status, header flags,
    [(type, data)], full output)."""
    host, port = server.rsplit(":", 1)
    result = subprocess.run(["dig", "@" + host, "-p", port, "+norec", "+time=2", "+tries=2",
                             name, qtype] + list(options),
                            capture_output=True, text=True, timeout=30)
    out = result.stdout
    status, flags, answers, section = None, set(), [], None
    for line in out.splitlines():
        if "status:" in line:
            status = line.split("status:")[1].split(",")[0].strip()
        elif line.startswith(";; flags:"):
            flags = set(line.split(";")[2].split(":")[1].split())
        elif line.startswith(";; ANSWER SECTION"):
            section = "answer"
        elif line.startswith(";;") and "SECTION" in line:
            section = None
        elif line.strip() and not line.startswith(";") and section == "answer":
            fields = line.split()
            answers.append((fields[3], " ".join(fields[4:])))
    return status, flags, sorted(answers), out


class Server:
    """One `slicewright apiserver` process. start() waits for its "serving on" line. It serves
    HTTPS with the CA in DATA_DIR/tls (unless extra_args has --insecure-http); connection() opens
    a connection that verifies it."""

    def __init__(self, binary, data_dir, extra_args=()):
        self.binary = binary
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.process = None
        self.url = None
        self.port = 0
        self.startup_seconds = None
        self.output = ""

    def start(self, port=None):
        port = self.port if port is None else port
        args = [self.binary, "apiserver", "--listen", "127.0.0.1:%d" % port,
                "--data-dir", self.data_dir] + self.extra_args
        started = time.monotonic()
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.output = ""
        deadline = started + 20 * SLOW
        buffer = b""
        prefix = "slicewright apiserver: serving on "
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise RuntimeError("server did not start in time: %r" % buffer.decode(errors="replace"))
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                self.process.wait()
                raise RuntimeError("server exited with %s: %s" %
                                   (self.process.returncode, buffer.decode(errors="replace")))
            buffer += chunk
            for line in buffer.decode(errors="replace").splitlines():
                if line.startswith(prefix):
                    self.startup_seconds = time.monotonic() - started
                    self.url = line[len(prefix):].strip()
                    self.port = int(self.url.rsplit(":", 1)[1])
                    self.output = buffer.decode(errors="replace")
                    # Keep draining stdout so the server never blocks on a full pipe.
                    self._drain()
                    return self

    @property
    def ca_file(self):
        """The CA that signed the serving certificate (DATA_DIR/tls/ca.crt)."""
        return os.path.join(self.data_dir, "tls", "ca.crt")

    def connection(self, timeout):
        """An http.client connection to the server: HTTPS verified against ca_file, or plain
        HTTP for an --insecure-http server."""
        if self.url.startswith("https://"):
            context = ssl.create_default_context(cafile=self.ca_file)
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=context)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def _drain(self):
        import threading

        process = self.process

        def drain():
            try:
                for _ in iter(lambda: process.stdout.read(4096), b""):
                    pass
            except (OSError, ValueError):
                pass

        threading.Thread(target=drain, daemon=True).start()

    def stop(self):
        """SIGTERM, then waits for the exit; returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=10 * SLOW)
        except subprocess.TimeoutExpired:
            self.kill()
            return -9

    def kill(self):
        """SIGKILL (a crash), then reaps the process."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Scratch:
    """A temporary directory removed at exit unless a check failed (kept for inspection)."""

    def __init__(self, name):
        self.path = tempfile.mkdtemp(prefix="sw-%s." % name)

    def cleanup(self, keep):
        if keep or os.environ.get("E2E_KEEP"):
            print("(kept %s for inspection)" % self.path)
        else:
            shutil.rmtree(self.path, ignore_errors=True)


def binary_from_argv():
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: %s PATH/TO/slicewright" % sys.argv[0])
    return os.path.abspath(sys.argv[1])


def install_sigterm_exit():
    """ctest's timeout sends SIGTERM: turn it into SystemExit so `finally` blocks kill servers."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
