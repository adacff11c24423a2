"""Names (a seat's, an entrant's) pass RFC 8266's Nickname profile, and nothing invisible or
blank gets through: each character of the table is refused, inside a name and alone, with the
field named; what is kept is the normalised name."""

from __future__ import annotations

import pytest

from referee.core.documents import BLANK_CHARACTERS, NAME_MAX, check_name
from referee.core.league import name_looks
from referee.core.refusals import Refusal

INVISIBLE = {
    "\u200b": "ZERO WIDTH SPACE",
    "\u2060": "WORD JOINER",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE (BOM)",
    "\u00ad": "SOFT HYPHEN",
    "\u3164": "HANGUL FILLER",
    "\u115f": "HANGUL CHOSEONG FILLER",
    "\u1160": "HANGUL JUNGSEONG FILLER",
    "\uffa0": "HALFWIDTH HANGUL FILLER",
    "\u2800": "BRAILLE PATTERN BLANK",
    "\U0001d159": "MUSICAL SYMBOL NULL NOTEHEAD",
    "\u200c": "ZERO WIDTH NON-JOINER",
    "\u200d": "ZERO WIDTH JOINER",
    "\u034f": "COMBINING GRAPHEME JOINER",
    "\u180e": "MONGOLIAN VOWEL SEPARATOR",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\x00": "NUL",
    "\x1b": "ESCAPE",
    "\n": "LINE FEED",
    "\u2028": "LINE SEPARATOR",
    "\U000e0001": "LANGUAGE TAG",
    "\U000e0020": "TAG SPACE",
    "\U000e0041": "TAG LATIN CAPITAL LETTER A",
    "\U000e007f": "CANCEL TAG",
    "\u0378": "an unassigned code point",
}


@pytest.mark.parametrize("char", list(INVISIBLE), ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("where", ["inside", "alone", "after"])
def test_invisible_format_and_control_characters_are_refused(char, where):
    name = {"inside": f"ab{char}cd", "alone": char, "after": f"bot{char}"}[where]
    with pytest.raises(Refusal) as refused:
        check_name(name, "seats[2].name")
    assert refused.value.code == "invalid-name"
    assert refused.value.field == "seats[2].name"
    assert f"U+{ord(char):04X}" in refused.value.detail or "blank" in refused.value.detail


def test_every_tag_character_is_refused():
    for code in range(0xE0001, 0xE0080):
        if code in range(0xE0002, 0xE0020):
            continue  # unassigned: refused as such
        with pytest.raises(Refusal):
            check_name(f"flag{chr(code)}", "name")


def test_the_blank_characters_precis_lets_through_are_refused_on_top():
    """RFC 8266 takes U+2800 and U+1D159 as symbols: they draw nothing, so they are refused
    here (BLANK_CHARACTERS), as are the Hangul fillers, which PRECIS refuses today."""
    assert {"\u2800", "\U0001d159", "\u3164"} <= BLANK_CHARACTERS
    for char in BLANK_CHARACTERS:
        with pytest.raises(Refusal, match="invisible"):
            check_name(f"a{char}b", "name")


@pytest.mark.parametrize(
    "name", ["", " ", "   ", "\u3000", "\u00a0\u2003", "\t"], ids=lambda n: repr(n)
)
def test_names_blank_after_normalisation_are_refused(name):
    with pytest.raises(Refusal) as refused:
        check_name(name, "name")
    assert refused.value.code == "invalid-name" and refused.value.field == "name"


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("Zoë", "Zoë"),
        ("Zoe\u0308", "Zoë"),  # NFC
        ("  Ann   Lee  ", "Ann Lee"),  # spaces trimmed and collapsed
        ("Ann\u3000Lee", "Ann Lee"),  # any space is a space
        ("ＡＢＣ", "ABC"),  # NFKC: full width is ASCII; case is kept
        ("ﬁsh", "fish"),
        ("玩家", "玩家"),
        ("لاعب", "لاعب"),
        ("👩 bot", "👩 bot"),
        ("bot-1_β", "bot-1_β"),
    ],
)
def test_the_normalised_name_is_what_is_kept(sent, kept):
    assert check_name(sent, "name") == kept
    assert check_name(kept, "name") == kept  # normalising again changes nothing


def test_a_name_longer_than_allowed_once_normalised_is_refused():
    assert check_name("x" * NAME_MAX, "name") == "x" * NAME_MAX
    with pytest.raises(Refusal, match="once normalised"):
        check_name("x" * (NAME_MAX - 1) + "\ufdfa", "name")  # one character, 18 once NFKC


@pytest.mark.parametrize(
    ("first", "second", "alike"),
    [
        ("Ada", "\u0410da", True),  # a Cyrillic А
        ("Ada", "Ad\u0251", True),  # LATIN SMALL LETTER ALPHA
        ("Ada", "ADA", True),  # case alone
        ("ADA", "\u0430da", True),  # alike once casefolded only
        ("Il", "ll", True),  # a capital I is an l, as written
        ("bot1", "botl", True),
        ("Burn", "Bum", True),  # rn is m
        ("paypal", "\u0440\u0430\u0443\u0440\u0430l", True),  # whole-script Cyrillic р а у
        ("Ada", "Adá", False),  # an accent shows
        ("Ada", "Eda", False),
        ("il", "ll", False),
        ("玩家", "玩家 2", False),
    ],
)
def test_names_that_look_alike_share_a_look(first, second, alike):
    """``name_looks`` (UTS #39 skeletons, ICU's): two names share one exactly where the
    league takes them for one bot's (docs/LEAGUE.md)."""
    shared = set(name_looks(check_name(first, "n"))) & set(name_looks(check_name(second, "n")))
    assert bool(shared) is alike, (first, second, name_looks(first), name_looks(second))
