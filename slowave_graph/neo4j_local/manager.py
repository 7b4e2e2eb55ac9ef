"""The managed local Neo4j: a real Neo4j Community server assembled from Maven Central jars.

Layout:
  CACHE/neo4j/<version>/lib/*.jar           jars copied by Maven (shared by every data directory)
  CACHE/neo4j/<version>/launcher-<sha>/     SlowaveNeo4j.class compiled once per launcher source, as a jar
  CACHE/neo4j/<version>/aot/<key>.aot       the JVM's ahead-of-time cache (Java 25+), once per JDK + jars
  DATA/neo4j/home/            the Neo4j home: store, transaction logs, debug log (neo4j-5/ for 5.x)
  DATA/neo4j/neo4j.conf       settings written at every start
  DATA/neo4j/password         generated password of user neo4j (mode 0600) unless NEO4J_PASSWORD
  DATA/neo4j/state.json       pid, port and version of the running server
  DATA/neo4j/launcher.log     the JVM's stdout/stderr

One DBMS per data directory (Neo4j holds a store lock); ``start`` re-uses a server that is already
running there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from importlib import resources
from pathlib import Path

from slowave_graph.config import Settings
from slowave_graph.exceptions import SlowaveError

log = logging.getLogger(__name__)

READY_LINE = "SLOWAVE_NEO4J_READY"
LAUNCHER_CLASS = "SlowaveNeo4j"
LAUNCHER_JAR = "slowave-neo4j-launcher.jar"
# -XX:AOTCacheOutput (JEP 514) records a training run and writes the cache when the JVM exits.
AOT_MIN_JAVA = 25
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies"

_JVM_FLAGS = [
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-XX:+UseG1GC",
    "-XX:+ExitOnOutOfMemoryError",
    # From the JVM options Neo4j ships in its own neo4j.conf: the JIT may constant-fold final
    # instance fields (the kernel's are many), and no library call can force a full collection.
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
]


def browser_style() -> str:
    """Neo4j Browser's style for the memory graph (browser_style.json, as one line of JSON: its
    ``:style`` command reads JSON as well as GraSS): each label captioned by its text."""
    text = (resources.files("slowave_graph.neo4j_local") / "browser_style.json").read_text()
    return json.dumps(json.loads(text), separators=(",", ":"))


class Neo4jLocalError(SlowaveError, RuntimeError):
    """The managed Neo4j could not be prepared or started; the message says what to do."""


@dataclass(frozen=True)
class Neo4jVersion:
    text: str
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Neo4jVersion:
        match = re.fullmatch(r"(\d+)\.(\d+)\.\d+", text.strip())
        if not match:
            raise Neo4jLocalError(f"not a Neo4j version: {text!r} (expected e.g. 2026.09.0 or 5.26.31)")
        return cls(text.strip(), int(match.group(1)), int(match.group(2)))

    @property
    def calver(self) -> bool:
        """2025.01 and later: Java 21+, Cypher 25."""
        return self.major >= 2025

    @property
    def store_dir_name(self) -> str:
        """Data directory per store line: 5.x stores upgrade to 2025+, never back."""
        return "neo4j" if self.calver else f"neo4j-{self.major}"

    @property
    def min_java(self) -> int:
        return 21 if self.calver else 17

    @property
    def max_java(self) -> int:
        return 25 if self.calver else 21

    def at_least(self, major: int, minor: int) -> bool:
        return (self.major, self.minor) >= (major, minor)


@dataclass
class RunningState:
    pid: int
    bolt_port: int
    version: str
    java: str
    started_at: float
    ready_seconds: float
    aot_cache: str | None = None  # the JVM's AOT cache it started with (or is recording)
    stopping: bool = False  # SIGTERM sent: shutting down, not to be joined

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"


def java_major(java_home: Path) -> int | None:
    """Major version of a JDK from its ``release`` file (no JVM start)."""
    release = java_home / "release"
    if not release.is_file():
        return None
    match = re.search(r'^JAVA_VERSION="(\d+)', release.read_text(errors="replace"), re.MULTILINE)
    return int(match.group(1)) if match else None


def find_java_home(version: Neo4jVersion, configured: Path | None) -> Path:
    """A JDK the Neo4j version supports: the configured one, JAVA_HOME, or the newest under /usr/lib/jvm."""
    wanted = f"Java {version.min_java}–{version.max_java}"
    if configured is not None:
        major = java_major(configured)
        if major is None or not version.min_java <= major <= version.max_java:
            raise Neo4jLocalError(
                f"SLOWAVE_JAVA_HOME={configured} is Java {major}; Neo4j {version.text} needs {wanted}."
            )
        return configured
    candidates: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]))
    jvm_root = Path("/usr/lib/jvm")
    if jvm_root.is_dir():
        candidates.extend(sorted(p for p in jvm_root.iterdir() if p.is_dir() and not p.is_symlink()))
    suitable = [
        (major, path)
        for path in candidates
        if (major := java_major(path)) is not None
        and version.min_java <= major <= version.max_java
        and (path / "bin" / "javac").exists()
    ]
    if not suitable:
        raise Neo4jLocalError(
            f"no JDK for Neo4j {version.text} ({wanted}) under JAVA_HOME or /usr/lib/jvm; install one "
            "or set SLOWAVE_JAVA_HOME (or choose SLOWAVE_NEO4J_VERSION=5.26.31 for Java 17)."
        )
    return max(suitable, key=lambda item: item[0])[1]


def _package_file(name: str) -> Path:
    return Path(str(resources.files("slowave_graph.neo4j_local") / name))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited child not yet reaped) is not alive.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _is_our_launcher(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return pid_alive(pid)
    return LAUNCHER_CLASS.encode() in cmdline


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
PORT_SPAN = 12_000  # free_port picks among this many ports just below the ephemeral range


def free_port() -> int:
    """A loopback port nothing is bound to now, picked at random just below the kernel's ephemeral
    range. The kernel's own pick (port 0) comes from that range, which every outgoing connection
    also draws from: a server that binds its port seconds later, after loading its model, lost it
    to an outgoing connection (in CI: a test server's own Bolt connections). Where the
    range is unknown (not Linux), the kernel picks."""
    try:
        low = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 0
    first = max(1024, low - PORT_SPAN)
    rng = secrets.SystemRandom()
    for _ in range(100 if low > first else 0):
        port = rng.randrange(first, low)
        if port_is_free(port):
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float | None:
    """Resident set size of a process in MB (Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class ManagedNeo4j:
    """Prepare, start, stop and inspect the managed Neo4j for one data directory."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.version = Neo4jVersion.parse(settings.neo4j_version)
        self.instance_dir = settings.data_dir / self.version.store_dir_name
        self.jar_dir = settings.cache_dir / "neo4j" / self.version.text / "lib"

    # ----------------------------------------------------------------- files
    @property
    def state_file(self) -> Path:
        return self.instance_dir / "state.json"

    @property
    def log_file(self) -> Path:
        return self.instance_dir / "launcher.log"

    @property
    def password_file(self) -> Path:
        return self.instance_dir / "password"

    def password(self) -> str:
        """The configured password, else the generated one (created on first use, mode 0600)."""
        if self.settings.neo4j_password is not None:
            return self.settings.neo4j_password.get_secret_value()
        if self.password_file.is_file():
            return self.password_file.read_text().strip()
        self.instance_dir.mkdir(parents=True, exist_ok=True)
        generated = secrets.token_urlsafe(18)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(generated + "\n")
        return generated

    # ------------------------------------------------------------ resolution
    def ensure_jars(self) -> Path:
        """Copy the Neo4j jars from Maven Central into the cache (once per version)."""
        marker = self.jar_dir / ".complete"
        if marker.is_file():
            return self.jar_dir
        mvn = shutil.which("mvn")
        if mvn is None:
            raise Neo4jLocalError(
                "Maven (mvn) is needed once to fetch the Neo4j jars from Maven Central; install it "
                "(e.g. apt-get install maven) or set NEO4J_URI to use an existing Neo4j."
            )
        staging = self.jar_dir.with_name("lib.partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        cmd = [
            mvn, "-q", "-B", "-f", str(_package_file("pom.xml")),
            f"-Dneo4j.version={self.version.text}", DEPENDENCY_PLUGIN,
            f"-DoutputDirectory={staging}", "-DincludeScope=runtime",
        ]  # fmt: skip
        log.info("resolving Neo4j %s jars from Maven Central", self.version.text)
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not any(staging.glob("neo4j-bolt-*.jar")):
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
            raise Neo4jLocalError(
                f"Maven could not resolve org.neo4j:neo4j:{self.version.text} + neo4j-bolt "
                f"(exit {proc.returncode}).\n{tail}"
            )
        shutil.rmtree(self.jar_dir, ignore_errors=True)
        staging.rename(self.jar_dir)
        marker.write_text(self.version.text + "\n")
        return self.jar_dir

    def ensure_launcher(self, java_home: Path) -> Path:
        """Compile SlowaveNeo4j.java once per (source, Neo4j version) into the cache, as a jar: the
        JVM's AOT cache only holds classes loaded from jars."""
        source = _package_file(f"{LAUNCHER_CLASS}.java")
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
        out = self.jar_dir.parent / f"launcher-{digest}-java{java_major(java_home)}"
        if (out / LAUNCHER_JAR).is_file():
            return out
        staging = out.with_name(out.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        proc = subprocess.run(
            [str(java_home / "bin" / "javac"), "-d", str(staging), "-cp", f"{self.jar_dir}/*", str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise Neo4jLocalError(f"compiling the Neo4j launcher failed:\n{proc.stderr[-3000:]}")
        with zipfile.ZipFile(staging / LAUNCHER_JAR, "w") as jar:
            for compiled in sorted(staging.glob("*.class")):
                jar.write(compiled, compiled.name)
                compiled.unlink()
        shutil.rmtree(out, ignore_errors=True)
        staging.rename(out)
        return out

    def class_path(self, launcher: Path) -> list[Path]:
        """The launcher and the Neo4j jars, in a fixed order (the AOT cache records the order)."""
        return [launcher / LAUNCHER_JAR, *sorted(self.jar_dir.glob("*.jar"))]

    def neo4j_conf(self) -> str:
        port = self.settings.neo4j_bolt_port
        lines = {
            "server.bolt.enabled": "true",
            "server.bolt.listen_address": f"127.0.0.1:{port}",
            "server.bolt.advertised_address": f"127.0.0.1:{port}",
            "server.http.enabled": "false",
            "server.https.enabled": "false",
            "dbms.security.auth_enabled": "true",
            "server.memory.pagecache.size": self.settings.neo4j_pagecache,
            "dbms.usage_report.enabled": "false",
            "db.tx_log.rotation.retention_policy": "2 files",
            # LOAD CSV may not read the host's files (the password file among them), from the
            # Browser's session, which can write, or any other
            "dbms.security.allow_csv_import_from_file_urls": "false",
            # Neo4j Browser runs these after it connects (dbms.clientConfig): its nodes then show
            # the memory's words rather than an id or an ellipsis
            "browser.post_connect_cmd": f"style {browser_style()}",
        }
        # Strict config validation makes unknown keys fatal, so only name what this version has.
        if self.version.at_least(2026, 3):
            lines["dbms.fleet_manager.enabled"] = "false"
        if self.version.at_least(2026, 5):
            lines["server.fleet_discovery.enabled"] = "false"
        return "".join(f"{key}={value}\n" for key, value in lines.items())

    def jvm_flags(self, java_home: Path) -> list[str]:
        # the whole heap from the start, as Neo4j recommends (initial = max size): no resizing while warm
        heap = self.settings.neo4j_heap
        flags = [f"-Xms{heap}", f"-Xmx{heap}", *_JVM_FLAGS]
        if self.version.at_least(2026, 2) and (java_major(java_home) or 0) >= 25:
            flags.append("-Dorg.neo4j.shaded.lucene9.vectorization.upperJavaFeatureVersion=25")
        if self.version.calver:
            flags.append("--add-modules=jdk.incubator.vector")  # SIMD vector search in Lucene
        return flags

    def java_command(self, java_home: Path, launcher: Path, aot: Sequence[str] = ()) -> list[str]:
        return [
            str(java_home / "bin" / "java"),
            *self.jvm_flags(java_home),
            *aot,
            "-cp",
            os.pathsep.join(str(entry) for entry in self.class_path(launcher)),
            LAUNCHER_CLASS,
            str(self.instance_dir / "home"),
            str(self.instance_dir / "neo4j.conf"),
        ]

    # ------------------------------------------------------------- AOT cache
    def aot_cache(self, java_home: Path, launcher: Path) -> Path | None:
        """Where the JVM's ahead-of-time cache for this JDK, these flags and these jars lives; None
        below Java 25. The JVM refuses a cache whose class path (names, sizes, times) or module
        options differ; all of them are in the key, so a stale cache is never named. The heap size
        is not: a cache recorded with one loads with any other."""
        if (java_major(java_home) or 0) < AOT_MIN_JAVA:
            return None
        key = hashlib.sha256(str(java_home.resolve()).encode())
        key.update((java_home / "release").read_bytes())
        for flag in self.jvm_flags(java_home):
            if not flag.startswith(("-Xms", "-Xmx")):
                key.update(flag.encode() + b"\0")
        for jar in self.class_path(launcher):
            stat = jar.stat()
            key.update(f"{jar}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
        return self.jar_dir.parent / "aot" / f"neo4j-{key.hexdigest()[:16]}.aot"

    def _aot_loads(self, java_home: Path, launcher: Path, cache: Path) -> bool:
        """The JVM maps the cache with these flags and this class path (AOTMode=on fails otherwise)."""
        if not cache.is_file() or cache.stat().st_size == 0:
            return False
        command = self.java_command(java_home, launcher, [f"-XX:AOTCache={cache}", "-XX:AOTMode=on"])
        probe = subprocess.run(
            [*command[: command.index(LAUNCHER_CLASS)], "-version"], capture_output=True, check=False
        )
        return probe.returncode == 0

    def train_aot_cache(self, workload: Callable[[RunningState, str], None]) -> Path | None:
        """Record the JVM's AOT cache once per JDK and jars (Java 25+; None below or when turned
        off). Neo4j runs twice on a scratch store under ``workload`` (given the server and its
        password): once to create the store, then in training mode, since later starts open an
        existing store and its indexes, which loads other classes than creating one. The JVM
        writes the cache as that second run exits: the classes it loaded, linked, and the profiles
        of the methods the workload ran."""
        java_home = find_java_home(self.version, self.settings.java_home)
        self.ensure_jars()
        launcher = self.ensure_launcher(java_home)
        cache = self.aot_cache(java_home, launcher)
        if cache is None or not self.settings.neo4j_aot_cache:
            return None
        if cache.is_file():
            return cache
        cache.parent.mkdir(parents=True, exist_ok=True)
        log.info("recording the JVM's AOT cache for Neo4j %s (once, a minute or two)", self.version.text)
        with tempfile.TemporaryDirectory(dir=cache.parent, prefix="training-") as scratch:
            trainer = ManagedNeo4j(
                self.settings.model_copy(
                    update={"data_dir": Path(scratch), "neo4j_bolt_port": free_port(), "neo4j_password": None}
                )
            )
            recorded = Path(scratch) / cache.name
            try:
                for output in (None, recorded):
                    state, _ = trainer.start(aot_output=output)
                    try:
                        workload(state, trainer.password())
                    finally:
                        trainer.stop(timeout=600)  # the JVM assembles the cache as it exits: tens of seconds
            except Exception as exc:  # an optimisation only: Neo4j starts without it
                log.warning("recording the JVM's AOT cache failed (%s); Neo4j starts without it", exc)
                return None
            if not self._aot_loads(java_home, launcher, recorded):
                log.warning("the JVM's AOT cache was not written or does not load; Neo4j starts without it")
                return None
            os.replace(recorded, cache)
        size_mb = cache.stat().st_size / 1e6
        log.info("JVM AOT cache for Neo4j %s: %s (%.0f MB)", self.version.text, cache, size_mb)
        return cache

    def fetch(self) -> dict[str, object]:
        """Everything start() needs on disk: jars and the compiled launcher."""
        java_home = find_java_home(self.version, self.settings.java_home)
        jars = self.ensure_jars()
        launcher = self.ensure_launcher(java_home)
        size = sum(p.stat().st_size for p in jars.glob("*.jar"))
        return {
            "version": self.version.text,
            "java": str(java_home),
            "jar_cache": str(jars),
            "jars": len(list(jars.glob("*.jar"))),
            "jar_cache_mb": round(size / 1e6, 1),
            "launcher": str(launcher),
        }

    # ------------------------------------------------------------- lifecycle
    def running(self) -> RunningState | None:
        """State of the server running for this data directory, if any (not one shutting down)."""
        state = self._live_state()
        return None if state is None or state.stopping else state

    def _write_state(self, state: RunningState) -> None:
        """Replace state.json atomically: other processes read it at any moment (to join a running
        Neo4j or wait for one stopping), and a half-written file would read as no Neo4j at all."""
        partial = self.state_file.with_name(f"{self.state_file.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(asdict(state), indent=2) + "\n")
        os.replace(partial, self.state_file)

    def _live_state(self) -> RunningState | None:
        try:
            state = RunningState(**json.loads(self.state_file.read_text()))
        except (OSError, ValueError, TypeError):
            return None
        if pid_alive(state.pid) and _is_our_launcher(state.pid):
            return state
        return None

    def _await_shutdown(self, timeout: float = 60.0) -> None:
        """Wait for a server that is shutting down (a stop whose process was killed mid-wait, as MCP
        clients do to a stdio server 2 s after closing it) to exit: joining it would fail."""
        state = self._live_state()
        if state is not None and state.stopping:
            log.info("managed Neo4j (pid %s) is shutting down; waiting for it", state.pid)
            self._terminate(state.pid, timeout)

    def start(self, timeout: float = 240.0, aot_output: Path | None = None) -> tuple[RunningState, bool]:
        """Start the server (or find it running). Returns (state, started_by_this_call).

        With the JVM's AOT cache where one was recorded (``train_aot_cache``), else without;
        ``aot_output``: record one, written there when the JVM exits."""
        existing = self._joinable()
        if existing is not None:
            return existing, False
        port = self.settings.neo4j_bolt_port
        if not port_is_free(port):
            raise Neo4jLocalError(
                f"port {port} is taken by another program; set SLOWAVE_NEO4J_BOLT_PORT to a free port "
                "or NEO4J_URI to use the Neo4j that is listening there."
            )
        java_home = find_java_home(self.version, self.settings.java_home)
        self.ensure_jars()
        launcher = self.ensure_launcher(java_home)
        aot, cache = self._aot_flags(java_home, launcher, aot_output)
        (self.instance_dir / "home").mkdir(parents=True, exist_ok=True)
        (self.instance_dir / "neo4j.conf").write_text(self.neo4j_conf())
        env = dict(os.environ, SLOWAVE_NEO4J_PASSWORD=self.password(), JAVA_HOME=str(java_home))
        started = time.monotonic()
        proc = self._spawn(java_home, launcher, aot, env)
        try:
            self._wait_ready(proc, timeout)
        except BaseException:
            self._terminate(proc.pid)
            raise
        state = RunningState(
            pid=proc.pid,
            bolt_port=port,
            version=self.version.text,
            java=str(java_home),
            started_at=time.time(),
            ready_seconds=round(time.monotonic() - started, 2),
            aot_cache=None if cache is None else str(cache),
        )
        self._write_state(state)
        log.info("managed Neo4j %s ready on %s in %.1fs", state.version, state.uri, state.ready_seconds)
        return state, True

    def _joinable(self) -> RunningState | None:
        """The server already running for this data directory (once one shutting down has exited),
        even on another port than the one asked for."""
        self._await_shutdown()
        existing = self.running()
        if existing is not None and existing.bolt_port != self.settings.neo4j_bolt_port:
            log.warning(
                "managed Neo4j already runs on port %s (asked for %s); using it",
                existing.bolt_port,
                self.settings.neo4j_bolt_port,
            )
        return existing

    def _aot_flags(
        self, java_home: Path, launcher: Path, aot_output: Path | None
    ) -> tuple[list[str], Path | None]:
        """The JVM's AOT cache flags and the cache they name: record one to ``aot_output``, else
        use the recorded one where it exists and SLOWAVE_NEO4J_AOT_CACHE allows it."""
        cache = self.aot_cache(java_home, launcher) if aot_output is None else aot_output
        if aot_output is not None:
            return [f"-XX:AOTCacheOutput={aot_output}"], cache
        if cache is not None and self.settings.neo4j_aot_cache and cache.is_file():
            return [f"-XX:AOTCache={cache}"], cache  # a cache the JVM cannot map is skipped with a warning
        return [], None

    def _spawn(
        self, java_home: Path, launcher: Path, aot: list[str], env: dict[str, str]
    ) -> subprocess.Popen[bytes]:
        """The JVM started in the instance directory, its output in a fresh log file."""
        with open(self.log_file, "wb") as log_handle:
            return subprocess.Popen(
                self.java_command(java_home, launcher, aot),
                stdin=subprocess.DEVNULL,
                stdout=log_handle,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.instance_dir,
                start_new_session=True,  # outlives `slowave-graph neo4j start`; ignores the terminal's ^C
            )

    def _wait_ready(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
            if READY_LINE in text:
                return
            if proc.poll() is not None:
                raise Neo4jLocalError(
                    f"Neo4j exited with code {proc.returncode} during start-up; last log lines:\n"
                    + "\n".join(text.splitlines()[-40:])
                )
            time.sleep(0.2)
        raise Neo4jLocalError(f"Neo4j did not become ready within {timeout:.0f}s; see {self.log_file}")

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server of this data directory. Returns False when none was running."""
        state = self.running()
        if state is None:
            self._await_shutdown(timeout)  # one an interrupted stop left shutting down
            return False
        stopping = replace(state, stopping=True)  # before SIGTERM: nobody joins it from now on
        self._write_state(stopping)
        self._terminate(state.pid, timeout)
        with contextlib.suppress(FileNotFoundError):
            self.state_file.unlink()
        return True

    @staticmethod
    def _terminate(pid: int, timeout: float = 60.0) -> None:
        """SIGTERM (runs the JVM shutdown hook: clean DBMS shutdown), then SIGKILL after timeout."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            if not pid_alive(pid):
                return
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def status(self) -> dict[str, object]:
        state = self.running()
        info: dict[str, object] = {
            "running": state is not None,
            "version": self.version.text,
            "data_dir": str(self.instance_dir),
            "jar_cache": str(self.jar_dir),
            "jars_cached": (self.jar_dir / ".complete").is_file(),
            "user": self.settings.neo4j_user,
            "password_file": None if self.settings.neo4j_password else str(self.password_file),
        }
        if state is not None:
            info.update(
                uri=state.uri,
                pid=state.pid,
                java=state.java,
                ready_seconds=state.ready_seconds,
                aot_cache=state.aot_cache,
            )
            info["rss_mb"] = rss_mb(state.pid)
        return info
