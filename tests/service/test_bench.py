"""`referee bench` runs end to end and reports every figure (speed is not asserted here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import referee_leftovers


def _bench(scratch: Path, *flags: str) -> dict:
    """The figures of a short run, which leaves nothing behind in the temporary directory
    (each run's Valkey data there once took 60 MB and was never removed)."""
    command = [sys.executable, "-m", "referee.cli", "bench", "--seconds", "3", "--bots", "4"]
    command += ["--live-games", "5", "--json", *flags]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=240,
        cwd=Path(__file__).parents[2],
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert referee_leftovers(scratch) == []
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_bench_reports_every_figure(short_tmp):
    figures = _bench(short_tmp)
    for name in (
        "ceiling_rps",
        "ceiling_rps_before",
        "ceiling_rps_after",
        "decisions_per_s",
        "ratio",
        "p50_ms",
        "p99_ms",
        "ceiling_p50_ms",
        "ceiling_p99_ms",
        "redis_round_trips_per_decision",
        "redis_calls_per_decision",
        "redis_reads_per_decision",
        "referee_cores_ceiling",
        "referee_cores_games",
        "referee_cpu_us_per_healthz",
        "referee_cpu_us_per_game_request",
        "cpu_ratio",
        "redis_bytes_per_game",
        "redis_cores_games",
        "redis_cpu_us_per_decision",
    ):
        assert isinstance(figures[name], (int, float)), name
    assert figures["decisions_per_s"] > 0 and figures["errors"] == 0
    # the ceiling is the mean of its two halves, taken before and after the games
    halves = sorted((figures["ceiling_rps_before"], figures["ceiling_rps_after"]))
    assert halves[0] * 0.99 <= figures["ceiling_rps"] <= halves[1] * 1.01
    # a decision takes a commit at least; the commit script's own calls come on top
    assert 1 <= figures["redis_round_trips_per_decision"] < figures["redis_calls_per_decision"]
    # the server read the clients' commands in no more reads than there were commands (a
    # write of the referee carries every command queued in one turn of its loop)
    reads = figures["redis_reads_per_decision"]
    assert 0 < reads <= figures["redis_round_trips_per_decision"]
    # the referee worked in both phases, and a game request costs it more than /healthz
    assert figures["referee_cores_ceiling"] > 0 and figures["referee_cores_games"] > 0
    assert 0 < figures["cpu_ratio"] < 1
    assert 0 < figures["ceiling_p50_ms"] <= figures["ceiling_p99_ms"]
    assert figures["redis_bytes_per_game"] > 1000
    assert figures["redis_bytes_per_game_max"] >= figures["redis_bytes_per_game"]
    assert 0 < figures["redis_bytes_per_game_retained"] < figures["redis_bytes_per_game"]
    assert figures["redis_primaries"] == 1 and figures["redis_cpu_us_per_decision"] > 0
    assert 0 < figures["redis_bytes_per_live_game"] < figures["redis_bytes_per_game"]


def test_bench_measures_a_cluster_summing_every_primary(short_tmp):
    """``--local-cluster 3``: the referee in cluster mode on three primaries; the Redis figures
    are the three servers' together (a commit's calls, wherever its game lives)."""
    figures = _bench(short_tmp, "--local-cluster", "3")
    assert figures["redis_primaries"] == 3
    assert figures["decisions_per_s"] > 0 and figures["errors"] == 0
    assert 1 <= figures["redis_round_trips_per_decision"] < figures["redis_calls_per_decision"]
    assert figures["redis_cores_games"] > 0 and figures["redis_cpu_us_per_decision"] > 0
    assert figures["redis_bytes_per_game_retained"] < figures["redis_bytes_per_game"]


def test_the_bots_http_client_reads_split_responses_keeps_alive_and_fails_on_a_close():
    """The bench's bots speak HTTP/1.1 themselves (``referee.tools.load.Http``): a response cut
    anywhere is read whole, the connection serves the next request, a connection the server
    closes fails the request waiting on it instead of leaving it hanging, and a bot's next
    request opens a new one (``Client``)."""
    import asyncio

    from referee.tools.load import Client, Http, head

    async def scenario():
        asked = []

        async def serve(reader, writer):
            for answer in (b"first", b"second"):
                asked.append(await reader.readuntil(b"\r\n\r\n"))
                if b"Content-Length: " in asked[-1]:
                    asked.append(await reader.readexactly(int(asked[-1].split(b": ")[-1])))
                reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer)
                for cut in (reply[:10], reply[10:-3], reply[-3:]):
                    writer.write(cut)
                    await writer.drain()
                    await asyncio.sleep(0.01)
            await reader.readuntil(b"\r\n\r\n")
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        connection = await Http.open(f"http://127.0.0.1:{port}")
        first = await connection.request(head("GET", "/healthz", "t0k"))
        second = await connection.request(head("POST", "/v1/games"), b'{"a":1}')
        try:
            await connection.request(head("GET", "/healthz"))
            failed = None
        except ConnectionError as error:
            failed = error
        client = Client(f"http://127.0.0.1:{port}")
        client.http = connection  # closed by the server
        again = await client.request(head("GET", "/healthz"))
        client.close()
        server.close()
        await server.wait_closed()
        return asked, first, second, failed, again

    asked, first, second, failed, again = asyncio.run(scenario())
    assert first == (200, b"first") and second == (200, b"second")
    assert asked[0].startswith(b"GET /healthz HTTP/1.1\r\n") and b"Bearer t0k" in asked[0]
    assert b"Content-Type: application/json" in asked[1] and asked[2] == b'{"a":1}'
    assert isinstance(failed, ConnectionError) and again == (200, b"first")
