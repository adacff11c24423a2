"""Creating a plain game (named, open and house seats only) touches nothing of webhooks or
bot accounts: no task follows its webhook seats, no registration is read. Every game created
over HTTP used to start such a follow, costing a Redis round trip and leaving an entry behind
in the process for good. Watched from outside, with the real server's MONITOR."""

from __future__ import annotations

import time

from helpers import Monitor, create


def test_a_plain_game_reads_no_webhook_registrations(http, valkey):
    with Monitor(valkey) as monitor:
        created = create(http, "choice", [{"name": "a"}, {"name": "b"}, {"bot": "random"}])
        gid = created["id"]
        for seat in created["seats"][:2]:
            turn = http.get(
                f"/v1/games/{gid}/turn", headers={"Authorization": f"Bearer {seat['token']}"}
            )
            assert turn.status_code == 200
        time.sleep(0.3)  # a follow started by the creation would have run by now
    webhooks = [c for c in monitor.commands if f"{{game:{gid}}}:webhooks" in c]
    assert not webhooks, webhooks
    assert any(gid in c for c in monitor.commands), "the monitor saw nothing of the game"
