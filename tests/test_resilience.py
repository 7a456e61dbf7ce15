"""A real granian server under the red-team attacks of issue 16: a killed worker, idle and
slow connections. Real processes, real sockets on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.servers import ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = ServerProcess(
        workers=2, SUANLI_HEADER_TIMEOUT_S="2", SUANLI_REQUEST_TIMEOUT_S="2", SUANLI_BACKLOG="4096"
    )
    try:
        yield process
    finally:
        process.stop()


def _probe(port: int, timeout: float = 5.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=timeout) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _closed_by_server(sock: socket.socket, within_s: float) -> tuple[bool, bytes]:
    """Wait up to ``within_s`` for the server to answer or close; (closed, bytes read)."""
    sock.settimeout(within_s)
    data = b""
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return True, data
            data += chunk
    except TimeoutError:
        return False, data
    except ConnectionResetError:
        return True, data


def test_idle_sockets_do_not_starve_health_probes(server: ServerProcess) -> None:
    """1,100 connections that send nothing (over the old per-worker budget of
    backlog/workers = 512) must leave every probe answered within 5 s."""
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(1100)]
    try:
        time.sleep(0.5)
        answered = sum(_probe(server.port) for _ in range(20))
        assert answered == 20
    finally:
        for sock in socks:
            sock.close()


def test_headers_sent_at_one_byte_per_second_are_cut_off(server: ServerProcess) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        closed = False
        for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaa":
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            closed, _ = _closed_by_server(sock, 0.5)
            if closed:
                break
        elapsed = time.monotonic() - started
    assert closed, "a dribbling request head must be closed by the header timeout"
    assert elapsed < 6, elapsed  # SUANLI_HEADER_TIMEOUT_S=2, plus scheduling slack


def test_idle_keep_alive_connection_is_closed(server: ServerProcess) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        closed, _ = _closed_by_server(sock, 6)
    assert closed


def test_slow_body_is_a_408_with_a_clear_reason(server: ServerProcess) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(
            b"POST /v1/estimate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 200\r\n\r\n{"workload": '
        )
        started = time.monotonic()
        _, data = _closed_by_server(sock, 8)
        elapsed = time.monotonic() - started
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), data[:300]
    assert elapsed < 5, elapsed
    detail = json.loads(body)["detail"]
    assert "did not arrive within 2 s" in detail, detail


def test_a_killed_worker_is_respawned_and_only_in_flight_requests_fail(
    server: ServerProcess,
) -> None:
    """``kill -9`` of one of two workers under load: the server keeps serving, the
    worker comes back, and only requests caught in the switch-over fail: at most two per
    client connection (the one in flight on the dead worker, and one that connected
    to its listening socket as it closed), none once the switch-over has passed."""
    before = server.worker_pids()
    assert len(before) == 2
    clients, stop = 4, threading.Event()
    outcomes: list[list[bool]] = [[] for _ in range(clients)]
    started: list[list[float]] = [[] for _ in range(clients)]

    def client(i: int) -> None:
        while not stop.is_set():
            started[i].append(time.monotonic())
            outcomes[i].append(_probe(server.port, timeout=10))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    killed_at = time.monotonic()
    os.kill(before[0], signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pids = server.worker_pids()
        if len(pids) == 2 and before[0] not in pids:
            break
        time.sleep(0.2)
    time.sleep(2.0)  # traffic after the respawn
    stop.set()
    for thread in threads:
        thread.join(timeout=15)
    assert server.process.poll() is None, server.tail()
    after = server.worker_pids()
    assert len(after) == 2
    assert before[0] not in after
    assert before[1] in after
    failed = sum(not ok for results in outcomes for ok in results)
    total = sum(len(results) for results in outcomes)
    assert total > 50, total
    assert failed <= 2 * clients, (failed, total)
    late_failures = [
        at - killed_at
        for times, results in zip(started, outcomes, strict=True)
        for at, ok in zip(times, results, strict=True)
        if not ok and at > killed_at + 2.0
    ]
    assert not late_failures, late_failures  # seconds after the kill
    assert all(results[-5:] == [True] * 5 for results in outcomes)  # served again
    lines = server.log_text().splitlines()
    assert any("Unexpected exit from worker-1" in line for line in lines)
    records = [json.loads(line) for line in lines]  # one JSON stream, granian's lines too
    assert any(r["logger"] == "_granian" for r in records)
