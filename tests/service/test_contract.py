"""The committed contract (the app's own: tests/test_contract_committed.py): served,
Schemathesis finds nothing against it, and every status, media type and header the referee
sends is stated in it (an answer of an operation with a status, a media type or a header
beyond HTTP's own that its contract does not state fails here: state it in
referee/web/contract.py)."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import LOADED, ThreadServer
from helpers import auth, create

from referee.tools.launch import LOAD_LIMITS, free_port, start_referee

ROOT = Path(__file__).parents[2]
CONTRACT = ROOT / "openapi" / "openapi.json"
CONTRACT_DOC = json.loads(CONTRACT.read_text())


def test_the_referee_serves_its_contract_where_the_readme_says(http):
    """/docs/openapi.json, and /openapi.json, where clients look first, redirects there."""
    served = http.get("/docs/openapi.json")
    assert served.status_code == 200 and served.json() == CONTRACT_DOC
    moved = http.get("/openapi.json")
    assert moved.status_code == 308 and moved.headers["location"] == "/docs/openapi.json"
    assert http.get("/openapi.json", follow_redirects=True).json() == CONTRACT_DOC
    readme = (ROOT / "README.md").read_text()
    assert "`/docs/openapi.json`" in readme and "`/openapi.json`" in readme


def test_contract_has_stable_operation_ids_and_problem_errors():
    contract = json.loads(CONTRACT.read_text())
    operations = {
        op["operationId"]: op for path in contract["paths"].values() for op in path.values()
    }
    assert set(operations) == {
        "healthz",
        "readyz",
        "listRulesets",
        "scoreChoice",
        "scoreChoiceSpecials",
        "scoreChopta",
        "createGame",
        "getGame",
        "claimSeat",
        "getTurn",
        "submitMove",
        "streamEvents",
        "getRecord",
        "getReplay",
        "listGames",
        "createTournament",
        "listTournaments",
        "registerEntrant",
        "getTournament",
        "nextDecision",
        "createBot",
        "getBot",
        "rotateBotToken",
        "setBotWebhook",
        "askBotWebhook",
        "revokeBotToken",
        "setBotStatus",
        "joinArena",
        "leaveArena",
        "getLeaderboard",
        "createChallenge",
        "getChallenge",
        "acceptChallenge",
        "declineChallenge",
        "cancelChallenge",
        "decideNext",
    }
    for operation_id, operation in operations.items():
        for status, response in operation["responses"].items():
            if status.startswith(("4", "5")):
                assert list(response["content"]) == ["application/problem+json"], operation_id
                schema = response["content"]["application/problem+json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Problem"}


def schemathesis(url: str, *args: str, config: Path | None = None) -> subprocess.CompletedProcess:
    """A Schemathesis run over the committed contract against ``url``, every check on."""
    executable = shutil.which("schemathesis") or shutil.which("st")
    command = [executable] if executable else [sys.executable, "-m", "schemathesis.cli"]
    configured = ["--config-file", str(config)] if config else []
    return subprocess.run(
        [*command, *configured, "run", str(CONTRACT), "--url", url, "--checks", "all", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def schemathesis_run(server, tmp_path_factory):
    """One Schemathesis run over every operation (but the event stream), its exchanges kept
    as a HAR file: (its result, its exchanges)."""
    har = tmp_path_factory.mktemp("schemathesis") / "exchanges.har"
    result = schemathesis(
        server.url,
        "--max-examples",
        "100",
        "--exclude-operation-id",
        "streamEvents",
        "--seed",
        "20261122",
        "--report",
        "har",
        "--report-har-path",
        str(har),
    )
    entries = json.loads(har.read_text())["log"]["entries"] if har.exists() else []
    return result, entries


def test_schemathesis_finds_nothing(schemathesis_run):
    """All operations, positive and negative data, stateful links from createGame, every
    check (``--checks all``).

    The event stream stays open until a game ends, so it is tested in test_games_http.py.
    Expected refusals of schema-valid requests (401/403/404/409/422) are configured in
    schemathesis.toml; no check is switched off.
    """
    result, entries = schemathesis_run
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert len(entries) > 500, result.stdout[-3000:]


@pytest.mark.parametrize("ruleset", ["choice-specials", "chopta"])
def test_schemathesis_finds_nothing_on_a_seats_own_routes(server, tmp_path, ruleset):
    """GET /turn and POST /moves with a seat's own token and game (the run above has no
    token to send): every check, any body, on the hot routes. ``wait`` is 0: a long-poll
    would only hold Schemathesis up to a minute a request."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = create(http, ruleset, 2)
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        (ROOT / "schemathesis.toml").read_text()
        + "".join(
            f'\n[[operations]]\ninclude-operation-id = "{operation}"\n'
            f'parameters = {{ game_id = "{game["id"]}", wait = 0 }}\n'
            'checks.positive_data_acceptance.expected-statuses = ["2XX", "409", "422"]\n'
            for operation in ("getTurn", "submitMove")
        )
    )
    result = schemathesis(
        server.url,
        "--max-examples",
        "50",
        "--include-operation-id",
        "getTurn",
        "--include-operation-id",
        "submitMove",
        "--phases",
        "coverage,fuzzing",
        "--header",
        f"Authorization: Bearer {game['seats'][0]['token']}",
        "--seed",
        "20261125",
        config=config,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


# -- every status and header the referee sends is in the contract ------------------------

#: what HTTP itself sends with any answer: never stated per operation
#: HTTP's own (content-encoding and vary: an answer compressed as Accept-Encoding asked)
_HTTP_HEADERS = frozenset(
    {
        *("content-type", "content-length", "date", "server", "connection", "keep-alive"),
        *("content-encoding", "vary"),
        # on every answer, as the contract's description says (a browser's, not a client's)
        "x-content-type-options",
    }
)
_TEMPLATES = [
    (re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path)) + "$"), path)
    for path in sorted(CONTRACT_DOC["paths"], key=lambda p: p.count("{"))
]


def _operation(method: str, url: str) -> tuple[str, dict] | None:
    """The contract's operation a request was sent to (a path without templates first)."""
    path = urlsplit(url).path
    for pattern, template in _TEMPLATES:
        if pattern.match(path):
            operation = CONTRACT_DOC["paths"][template].get(method.lower())
            return (operation["operationId"], operation) if operation else None
    return None


def _undocumented(method: str, url: str, status: int, headers: dict[str, str]) -> list[str]:
    """What an answer holds that its operation's contract does not state: its status, its
    media type, or a header beyond HTTP's own."""
    found = _operation(method, url)
    if found is None:
        return []  # not an operation of the contract (a made-up path: 404 is generic)
    operation_id, operation = found
    response = operation["responses"].get(str(status))
    if response is None:
        return [f"{operation_id} answered {status}, which its contract does not state"]
    wrong = []
    media = headers.get("content-type", "").split(";")[0].strip()
    if media and media not in response.get("content", {}):
        wrong.append(f"{operation_id} {status} answered {media}, not stated")
    stated = {name.lower() for name in response.get("headers", {})}
    for name in set(headers) - _HTTP_HEADERS - stated:
        wrong.append(f"{operation_id} {status} sent the header {name}, not stated")
    return wrong


def test_every_status_and_header_schemathesis_met_is_in_the_contract(schemathesis_run):
    _, entries = schemathesis_run
    wrong = set()
    for entry in entries:
        request, response = entry["request"], entry["response"]
        headers = {h["name"].lower(): h["value"] for h in response["headers"]}
        wrong.update(_undocumented(request["method"], request["url"], response["status"], headers))
    assert not wrong, sorted(wrong)


def _one_of_each(http: httpx.Client) -> list[tuple[str, str, dict | None, str | None]]:
    """One request per operation (but the event stream), on a game and a tournament made
    for them: (method, path, body, token)."""
    game = create(http, "choice", 2)
    open_game = http.post(
        "/v1/games", json={"ruleset": "choice", "seats": [{"name": "a"}, {}]}
    ).json()
    tournament = http.post(
        "/v1/tournaments", json={"ruleset": "choice", "entrants": 4, "table_size": 2}
    ).json()
    entrant = http.post(f"/v1/tournaments/{tournament['id']}/entrants", json={"name": "e"})
    gid, tid, seat = game["id"], tournament["id"], game["seats"][0]["token"]
    move = http.get(f"/v1/games/{gid}/turn", headers=auth(seat)).json()
    one_move = {"seq": move["seq"], "move": move["legal_moves"][0]}
    return [
        ("GET", "/healthz", None, None),
        ("GET", "/readyz", None, None),
        ("GET", "/v1/rulesets", None, None),
        ("POST", "/v1/rulesets/choice/score", {"marks": {}}, None),
        ("POST", "/v1/rulesets/choice-specials/score", {"marks": {}}, None),
        ("POST", "/v1/rulesets/chopta/score", {"area": []}, None),
        ("GET", "/v1/games", None, None),
        ("POST", "/v1/games", {"ruleset": "choice", "seats": [{"name": "a"}]}, None),
        ("GET", f"/v1/games/{gid}", None, None),
        ("POST", f"/v1/games/{open_game['id']}/seats", {"name": "b"}, None),
        ("GET", f"/v1/games/{gid}/turn", None, seat),
        ("GET", f"/v1/games/{gid}/turn?wait=0.01", None, seat),
        ("POST", f"/v1/games/{gid}/moves?wait=0", one_move, seat),
        ("POST", f"/v1/games/{gid}/moves", one_move, seat),
        ("GET", f"/v1/games/{gid}/record", None, None),
        ("GET", f"/v1/games/{gid}/replay", None, None),
        ("GET", "/v1/tournaments", None, None),
        ("POST", "/v1/tournaments", {"ruleset": "choice", "entrants": 2}, None),
        ("GET", f"/v1/tournaments/{tid}", None, None),
        ("POST", f"/v1/tournaments/{tid}/entrants", {"name": "f"}, None),
        ("GET", "/v1/me/next", None, entrant.json()["token"]),
    ]


def _sent(url: str, requests: list, repeat: int = 1) -> tuple[set[str], set[tuple[str, int]]]:
    """Each request sent ``repeat`` times: what the contract does not state of the answers,
    and the (operation, status) pairs met."""
    wrong: set[str] = set()
    met: set[tuple[str, int]] = set()
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(repeat):
            for method, path, body, token in requests:
                headers = auth(token) if token else {}
                answer = client.request(method, path, json=body, headers=headers)
                found = _operation(method, url + path)
                met.add((found[0] if found else path, answer.status_code))
                wrong.update(
                    _undocumented(method, url + path, answer.status_code, dict(answer.headers))
                )
    return wrong, met


def test_every_operation_states_what_it_answers(server, valkey):
    """Every operation, asked alike on a working referee, past its body limit, past its rate
    limits and with its store down: each status and header sent is in the contract (201's
    Location, 429's and 503's Retry-After, the edge's statuses on every operation)."""
    with httpx.Client(base_url=server.url, timeout=30) as http:
        requests = _one_of_each(http)
    wrong, met = _sent(server.url, requests)
    assert {status for _, status in met} >= {200, 201}, met
    assert all(status < 500 for _, status in met), met

    too_big = [
        (m, p, {"pad": "x" * (LOADED.max_body_bytes + 1)}, t) for m, p, b, t in requests if b
    ]
    more, met = _sent(server.url, too_big)
    wrong |= more
    assert {status for _, status in met} == {413}, met

    # the same games and tournament (one store), through a referee with low limits
    with ThreadServer(valkey, rate_per_token=2, rate_per_address=8) as limited:
        more, met = _sent(limited.url, requests, repeat=3)
    wrong |= more
    limited_ops = {operation for operation, status in met if status == 429}
    assert {"getTurn", "submitMove", "getGame", "createGame"} <= limited_ops, met

    dead = f"redis://127.0.0.1:{free_port()}/0"
    with ThreadServer(dead) as storeless:
        more, met = _sent(storeless.url, requests)
    wrong |= more
    unavailable = {operation for operation, status in met if status == 503}
    assert {"readyz", "getTurn", "submitMove", "getGame", "createGame"} <= unavailable, met
    assert not wrong, sorted(wrong)


def _head(data: bytes) -> tuple[int, dict[str, str]]:
    """The status and headers of an answer read off a socket."""
    lines = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    fields = (line.partition(":") for line in lines[1:])
    return int(lines[0].split()[1]), {k.strip().lower(): v.strip() for k, _, v in fields}


def test_the_edges_answers_are_in_the_contract(valkey):
    """What the HTTP edge answers before any handler (headers too large, headers too slow),
    if it answers at all rather than closing, is in the contract too."""
    environment = {**LOAD_LIMITS, "REFEREE_HEADER_TIMEOUT_S": "0.5"}
    process, url = start_referee(valkey, env=environment)
    wrong: set[str] = set()
    try:
        try:
            big = httpx.get(f"{url}/v1/games", headers={"x-padding": "a" * 200_000}, timeout=10)
            wrong.update(
                _undocumented("GET", f"{url}/v1/games", big.status_code, dict(big.headers))
            )
        except httpx.HTTPError:
            pass  # closed without an answer: nothing sent to state
        split = urlsplit(url)
        with socket.create_connection((split.hostname, split.port), timeout=5) as sock:
            sock.sendall(b"GET /v1/games HTTP/1.1\r\nHost: referee\r\n")  # and no more
            data = b""
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):
                    data += chunk
        if data:
            status, headers = _head(data)
            wrong.update(_undocumented("GET", f"{url}/v1/games", status, headers))
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert not wrong, sorted(wrong)
