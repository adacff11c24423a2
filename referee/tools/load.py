"""The bench's load generators: bots that play 2-seat CHOICE over plain HTTP/1.1, and the
``/healthz`` hammer that measures the stack's ceiling. Each runs in a process of its own."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import time
import urllib.parse
from typing import Any

import httptools
import httpx
import msgspec

from .._gc import settle_collector
from ..games import DEFAULT

__all__ = [
    "BENCH_GAME",
    "Client",
    "Http",
    "TurnNeeded",
    "head",
    "play_game",
    "prepare_load_process",
    "run_load",
]

#: The game every load generator plays: the registry's default ruleset (CHOICE), 2 seats, no
#: deadlines.
BENCH_GAME = {"ruleset": DEFAULT, "seats": [{"name": "a"}, {"name": "b"}], "deadline_s": 0}


class TurnNeeded(msgspec.Struct):
    """What a bench bot reads of a turn: it plays the first legal move, sent back verbatim
    (the arena's bots of ``benchmarks/league.py`` read theirs alike)."""

    status: str
    seq: int = 0
    legal_moves: list[msgspec.Raw] = []


# The bots share the referee's two cores, so their own JSON work is kept small, as a bot in a
# hurry would keep it: msgspec, decoding only what they act on (the standard library's json,
# decoding the whole view, took a fifth of a bot's CPU per turn).
_decode_turn = msgspec.json.Decoder(TurnNeeded).decode


class _AnswerNeeded(msgspec.Struct):
    """What a bench bot reads of a decision's answer: the next turn it holds."""

    turn: TurnNeeded | None = None


_decode_answer = msgspec.json.Decoder(_AnswerNeeded).decode
_json_encode = msgspec.json.encode


class Http(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection of a load generator, one request at a time.

    The bots share the referee's two cores, and what their own event loop spends on a request
    is added to every latency they time: aiohttp took about as much CPU per request as the
    referee. A bot needs no more than this: requests it builds once, a response parsed by
    httptools (the parser uvicorn serves with).
    """

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.reply: asyncio.Future[tuple[int, bytes]] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.body: list[bytes] = []
        self.answered_at = time.monotonic()  # the last answer's (or the connection's) time

    @classmethod
    async def open(cls, url: str) -> Http:
        address = urllib.parse.urlsplit(url)
        loop = asyncio.get_running_loop()
        # a URL without host or port: asyncio refuses it itself (typeshed wants both, or a sock)
        _, connection = await loop.create_connection(cls, address.hostname, address.port)  # type: ignore[arg-type]
        return connection

    @property
    def closed(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    async def request(self, head: bytes, body: bytes | None = None) -> tuple[int, bytes]:
        """Status and body of the response to a request (``head`` built by ``head``)."""
        if self.closed:
            raise ConnectionError("the referee closed the connection")
        assert self.transport is not None  # not closed
        loop = asyncio.get_running_loop()
        self.reply = reply = loop.create_future()
        self.body = []
        # a timer, not asyncio.wait_for (a waiter and callbacks more per request)
        self.timer = loop.call_later(60, self._timed_out)
        if body is None:
            self.transport.write(head + b"\r\n")
        else:
            self.transport.write(b"%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body))
        answer: tuple[int, bytes] = await reply
        return answer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a TCP connection's transport is an asyncio.Transport (asyncio.Protocol says Base...)
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionError(f"a response that is not HTTP: {error}"))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.answered_at = time.monotonic()
        if self.timer is not None:
            self.timer.cancel()
        if self.reply is not None and not self.reply.done():
            self.reply.set_result((self.parser.get_status_code(), b"".join(self.body)))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError(f"the connection to the referee was lost: {exc!r}"))

    def _timed_out(self) -> None:
        self._fail(TimeoutError("no answer from the referee in 60 s"))

    def _fail(self, error: Exception) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.reply is not None and not self.reply.done():
            self.reply.set_exception(error)
        if self.transport is not None:
            self.transport.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


#: how long a load generator's connection may stay idle before a request opens another: less
#: than the referee's keep-alive (``REFEREE_KEEP_ALIVE_S``, 5 s by default), as an HTTP client's
#: pool expires its connections before the server closes them. A request sent as the server
#: closes the connection is reset, unread: a slow referee (under callgrind,
#: ``benchmarks/server_instructions.py``) met that race at a table's next creation.
IDLE_EXPIRY_S = 4.0


class Client:
    """A load generator's connection, opened again where the referee closed it, or would
    soon close it (idle for ``IDLE_EXPIRY_S``: a table's, while its game is played)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http: Http | None = None

    async def request(self, head: bytes, body: bytes | None = None) -> tuple[int, bytes]:
        http = self.http
        if http is None or http.closed or time.monotonic() - http.answered_at > IDLE_EXPIRY_S:
            if http is not None:
                http.close()
            self.http = http = await Http.open(self.url)
        return await http.request(head, body)

    def close(self) -> None:
        if self.http is not None:
            self.http.close()


def head(method: str, path: str, token: str | None = None) -> bytes:
    """A request's line and headers but the body's length (``Http.request`` adds it)."""
    head = f"{method} {path} HTTP/1.1\r\nHost: referee\r\n"
    if token is not None:
        head += f"Authorization: Bearer {token}\r\n"
    if method == "POST":
        head += "Content-Type: application/json\r\n"
    return head.encode()


async def _ceiling(url: str, concurrency: int, seconds: float) -> dict[str, Any]:
    """``GET /healthz`` at ``concurrency``; ``requests`` counts the answers within the window,
    ``all_requests`` every answer (for CPU per request)."""
    start = time.monotonic()
    stop = start + seconds
    stats: dict[str, Any] = {"requests": 0, "all_requests": 0, "elapsed": seconds, "latencies": []}
    healthz = head("GET", "/healthz")

    async def worker() -> None:
        connection = Client(url)
        try:
            while time.monotonic() < stop:
                began = time.perf_counter()
                status, _ = await connection.request(healthz)
                ok = status == 200
                stats["all_requests"] += ok
                if ok and time.monotonic() <= stop:
                    stats["requests"] += 1
                    stats["latencies"].append((time.perf_counter() - began) * 1000)
        finally:
            connection.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return stats


async def _games(url: str, bots: int, seconds: float) -> dict[str, Any]:
    """``bots`` bots, two per CHOICE game, playing new games until time is up.

    Rates count what was answered within the window (``elapsed``); long-polls never wait past
    its end, and ``all_requests`` counts every answer (for CPU per request).
    """
    start = time.monotonic()
    stop = start + seconds
    stats: dict[str, Any] = {
        "turn": 0,
        "moves": 0,
        "decisions": 0,
        "errors": 0,
        "games": 0,
        "all_requests": 0,
        "latencies": [],
        "waited": [],
        "elapsed": seconds,
    }
    create, game_body = head("POST", "/v1/games"), _json_encode(BENCH_GAME)

    async def bot(connection: Client, game_id: str, token: str, posting: dict[int, int]) -> None:
        """One request per decision: the first turn from ``GET /turn`` (long-polled), then
        ``POST /moves?wait=`` whose answer holds the seat's next turn.

        Both seats decide each roll, so the seat that posts first is answered only once the
        other has decided too: its round trip is timed in ``waited`` latencies. The seat
        that posts while the other's decision on the same seq is in flight waits on no one:
        its round trip (decision accepted, the next roll dealt, the next turn in hand) is a
        decision's latency (``latencies``, the bench's p50 and p99)."""
        # built once, as a bot in a loop keeps them
        turn_path = f"/v1/games/{game_id}/turn?wait="
        moves_path = f"/v1/games/{game_id}/moves?wait="
        long_poll = head("GET", turn_path + "5", token)
        decide = head("POST", moves_path + "5", token)

        def within(built: bytes, method: str, path: str, left: float) -> bytes:
            """The request built once (a 5 s wait), or near the window's end one that waits
            only for what is left of it."""
            return built if left >= 5 else head(method, f"{path}{max(0, left):.3f}", token)

        turn: TurnNeeded | None = None
        while True:
            left = stop - time.monotonic()  # a long-poll never waits past the window
            if turn is None or turn.status == "waiting":
                _, reply = await connection.request(within(long_poll, "GET", turn_path, left))
                turn = _decode_turn(reply)
                stats["all_requests"] += 1
                if time.monotonic() > stop:
                    return
                stats["turn"] += 1
            if turn.status != "your_turn":
                if turn.status == "finished":
                    return
                continue
            began = time.perf_counter()
            seq = turn.seq
            last = posting.get(seq, 0) > 0  # the other seat's decision is in flight
            posting[seq] = posting.get(seq, 0) + 1
            decision = _json_encode({"seq": seq, "move": turn.legal_moves[0]})
            post = within(decide, "POST", moves_path, left)
            status, reply = await connection.request(post, decision)
            posting[seq] -= 1
            stats["all_requests"] += 1
            if time.monotonic() > stop:
                return
            took = (time.perf_counter() - began) * 1000
            stats["latencies" if last else "waited"].append(took)
            stats["moves"] += 1
            stats["decisions" if status == 200 else "errors"] += 1
            turn = _decode_answer(reply).turn if status == 200 else None

    async def table() -> None:
        """An organizer and its two bots, each on a connection of its own that it keeps from
        game to game, as a bot's HTTP client keeps its connections."""
        connection, seats = Client(url), [Client(url), Client(url)]
        try:
            while time.monotonic() < stop:
                _, reply = await connection.request(create, game_body)
                game = json.loads(reply)
                posting: dict[int, int] = {}  # seq -> the seats' decisions in flight
                await asyncio.gather(
                    *(
                        bot(seat, game["id"], s["token"], posting)
                        for seat, s in zip(seats, game["seats"], strict=True)
                    )
                )
                stats["games"] += 1
        finally:
            for each in (connection, *seats):
                each.close()

    await asyncio.gather(*(table() for _ in range(max(1, bots // 2))))
    return stats


def prepare_load_process() -> None:
    """A load process runs as the referee does: on uvloop, its collector's passes spaced
    out (they would stall its loop and add to the latencies it measures). Every harness
    whose figures are set beside the bench's prepares its bots' processes alike."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    settle_collector()


def _load_process(kind: str, url: str, concurrency: int, seconds: float, queue: Any) -> None:
    prepare_load_process()
    runner = _ceiling if kind == "ceiling" else _games
    queue.put(asyncio.run(runner(url, concurrency, seconds)))


def run_load(
    kind: str, url: str, total: int, processes: int, seconds: float
) -> list[dict[str, Any]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    shares = [total // processes + (1 if i < total % processes else 0) for i in range(processes)]
    workers = [
        context.Process(target=_load_process, args=(kind, url, share, seconds, queue))
        for share in shares
        if share
    ]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=seconds + 120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    return results


def play_game(http: httpx.Client, spec: dict[str, Any] = BENCH_GAME) -> tuple[str, int]:
    """One bench game (``spec``: how it is created) played to its end, one request at a
    time: each seat in turn asks for its turn and posts the first legal move. Returns the
    game's id and the requests made."""
    game = http.post("/v1/games", json=spec).json()
    tokens = [seat["token"] for seat in game["seats"]]
    requests = 0
    while True:
        for token in tokens:
            headers = {"Authorization": f"Bearer {token}"}
            turn = http.get(f"/v1/games/{game['id']}/turn", headers=headers).json()
            requests += 1
            if turn["status"] == "finished":
                return game["id"], requests
            if turn["status"] == "your_turn":
                move = {"seq": turn["seq"], "move": turn["legal_moves"][0]}
                http.post(f"/v1/games/{game['id']}/moves", headers=headers, json=move)
                requests += 1
