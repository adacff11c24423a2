"""Provable dice: a pure function of key and position, 1..6 without bias."""

from collections import Counter

from referee.games import commitment, dice_key, roll


def test_same_key_and_position_give_same_dice():
    assert roll(b"k" * 32, "roll/3", 5) == roll(b"k" * 32, "roll/3", 5)


def test_die_depends_only_on_its_position_not_on_how_many_are_drawn():
    assert roll(b"seed", "round/0/seat/1", 10)[:5] == roll(b"seed", "round/0/seat/1", 5)


def test_positions_and_keys_differ():
    assert roll(b"seed", "roll/0", 20) != roll(b"seed", "roll/1", 20)
    assert roll(b"seed", "roll/0", 20) != roll(b"other", "roll/0", 20)


def test_faces_are_uniform_over_many_draws():
    counts = Counter(roll(b"uniformity", "many", 60_000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    for face in range(1, 7):
        assert abs(counts[face] - 10_000) < 400, counts


def test_commitment_is_sha256_hex():
    assert commitment(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_client_seeds_change_the_key_but_none_keeps_it():
    assert dice_key(b"s") == b"s"
    assert dice_key(b"s", ["bot-a"]) != dice_key(b"s", ["bot-b"])
    assert dice_key(b"s", ["a", "b"]) != dice_key(b"s", ["ab"])


def test_dice_match_a_plain_hmac_reference_implementation():
    import hmac

    def reference(key, label, count):
        out, block = [], 0
        while len(out) < count:
            digest = hmac.digest(key, f"{label}/{block}".encode(), "sha256")
            out += [byte % 6 + 1 for byte in digest if byte < 252]
            block += 1
        return tuple(out[:count])

    for i in range(300):
        key = bytes(range(i % 90 + 1))
        assert roll(key, f"roll/{i}", i % 40 + 1) == reference(key, f"roll/{i}", i % 40 + 1)


def test_choice_rolls_are_six_to_a_dice_position():
    """RULES.md "Dice": CHOICE roll n is dice 5*(n % 6) .. +4 of position rolls/<n // 6>."""
    from referee.rulesets.choice.rounds import roll_dice

    key = b"choice-positions"
    for n in range(40):
        start = 5 * (n % 6)
        assert tuple(roll_dice(key, n)) == roll(key, f"rolls/{n // 6}", 30)[start : start + 5]
