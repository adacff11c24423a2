#!/bin/sh
# A stdin bot in shell and jq: one Turn JSON line in, one move line out.
# Run it with `referee bot --exec "sh bot.sh" --url URL --seat-token TOKEN`.
# jq reads the stream of turns itself and answers each at once (--unbuffered);
# it plays legal_moves[seq % length]: put your strategy in the filter.
exec jq --compact-output --unbuffered '.legal_moves[.seq % (.legal_moves | length)]'
