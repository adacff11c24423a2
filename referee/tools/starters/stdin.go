// A stdin bot in Go with the standard library only: one Turn JSON line in, one move line out.
// Build it with `go build -o bot .`, run it with
// `referee bot --exec ./bot --url URL --seat-token TOKEN`.
// It plays legal_moves[seq % len(legal_moves)]: put your strategy in choose.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Turn is the part of the referee's Turn JSON this bot reads; moves stay raw JSON,
// sent back verbatim.
type Turn struct {
	Seq        int               `json:"seq"`
	LegalMoves []json.RawMessage `json:"legal_moves"`
}

func choose(turn Turn) json.RawMessage {
	return turn.LegalMoves[turn.Seq%len(turn.LegalMoves)]
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20) // a turn's view may be long
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var turn Turn
		if err := json.Unmarshal(in.Bytes(), &turn); err != nil {
			fmt.Fprintln(os.Stderr, "not a turn:", err)
			os.Exit(1)
		}
		var move bytes.Buffer // on one line, however the turn was spaced
		if err := json.Compact(&move, choose(turn)); err != nil {
			fmt.Fprintln(os.Stderr, "not a move:", err)
			os.Exit(1)
		}
		move.WriteString("\n")
		out.Write(move.Bytes())
		out.Flush()
		fmt.Fprintf(os.Stderr, "seq %d: %d legal moves\n", turn.Seq, len(turn.LegalMoves))
	}
}
