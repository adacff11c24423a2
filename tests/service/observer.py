"""A party that reads all it may while a tournament plays, and writes down every byte it is told
with the moment it arrived (one JSON line each: ``t``, ``kind``, ``src``, ``body``).

``python observer.py URL TOURNAMENT_ID OUT [ENTRANT_TOKEN]``: as a spectator it polls the
tournament, every game's public view and record, and follows every game's event stream; given
an entrant's token it also plays that entrant (a random legal move each time), as a cheating
bot would, keeping its own answers ("own") apart from what anyone may read ("public"). It stops
once the tournament is over and it has looked at everything once more, or after five minutes.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time

import httpx

LIMIT_S = 300


class Notebook:
    def __init__(self, path: str) -> None:
        self.file = open(path, "w")  # noqa: SIM115 - closed by close()
        self.lock = threading.Lock()

    def note(self, kind: str, src: str, body: str) -> None:
        line = json.dumps({"t": time.time(), "kind": kind, "src": src, "body": body})
        with self.lock:
            self.file.write(line + "\n")

    def close(self) -> None:
        self.file.close()


def follow(url: str, game_id: str, book: Notebook, stop: threading.Event) -> None:
    """A game's event stream, each whole event noted as it arrives; a refusal, noted, is
    asked again a little later."""
    src = f"/v1/games/{game_id}/events"
    while not stop.is_set():
        try:
            with httpx.stream("GET", url + src, timeout=30) as reply:
                if reply.status_code != 200:
                    book.note("public", src, reply.read().decode())
                    stop.wait(0.1)
                    continue
                buffer = ""
                for chunk in reply.iter_text():
                    buffer += chunk
                    *events, buffer = buffer.split("\n\n")
                    for event in events:
                        book.note("public", src, event)
                    if stop.is_set():
                        return
                return  # the stream ended with game_over
        except httpx.HTTPError:
            stop.wait(0.1)


def play(url: str, token: str, book: Notebook, stop: threading.Event) -> None:
    chooser = random.Random(7)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, timeout=30) as http:
        while not stop.is_set():
            reply = http.get("/v1/me/next", params={"wait": 2}, headers=headers)
            book.note("own", "/v1/me/next", reply.text)
            step = reply.json()
            if step.get("status") == "finished":
                return
            if step.get("status") != "your_turn":
                continue
            turn = step["turn"]
            body = {"seq": turn["seq"], "move": chooser.choice(turn["legal_moves"])}
            src = f"/v1/games/{step['game_id']}/moves"
            answer = http.post(
                src, json=body, headers={"Authorization": f"Bearer {step['seat_token']}"}
            )
            book.note("own", src, answer.text)


def main(url: str, tournament_id: str, out: str, token: str | None = None) -> None:
    book = Notebook(out)
    stop = threading.Event()
    threads: dict[str, threading.Thread] = {}
    if token:
        player = threading.Thread(target=play, args=(url, token, book, stop), daemon=True)
        player.start()
    ends = time.monotonic() + LIMIT_S
    last_pass = False
    with httpx.Client(base_url=url, timeout=30) as http:
        while time.monotonic() < ends:
            src = f"/v1/tournaments/{tournament_id}"
            reply = http.get(src)
            book.note("public", src, reply.text)
            view = reply.json()
            book.note("public", "/v1/games", http.get("/v1/games", params={"limit": 100}).text)
            for tables in view.get("rounds", []):
                for table in tables:
                    game_id = table["game_id"]
                    for path in ("", "/record", "/replay"):
                        game_src = f"/v1/games/{game_id}{path}"
                        book.note("public", game_src, http.get(game_src).text)
                    if game_id not in threads:
                        threads[game_id] = threading.Thread(
                            target=follow, args=(url, game_id, book, stop), daemon=True
                        )
                        threads[game_id].start()
            if last_pass:
                break
            last_pass = view.get("status") == "finished"
            time.sleep(0.02)
    for thread in threads.values():
        thread.join(timeout=10)
    stop.set()
    book.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
