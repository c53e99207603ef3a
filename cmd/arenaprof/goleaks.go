package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/arenaprof/arenaprof/internal/goleak"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// goroutineLeakRow is one row of the "goroutines" of leaks -json: the
// leaked goroutines of one stack (leaf first, function names), how many,
// and the live arenas they took and hold (exact, from the registry of live
// arenas; see docs/goroutine-leaks.md).
type goroutineLeakRow struct {
	Stack      []string `json:"stack"`
	Count      int64    `json:"count"`
	ArenaBytes int64    `json:"arena_bytes"`
	Arenas     int64    `json:"arenas"`
}

// readGoroutineLeaks reads the leaked goroutines of the service at base (its
// base URL) and the arenas they hold. rows is never nil; note, when not
// empty, says what could not be read and why: a service without the
// goroutine leak profile gives no rows and a note saying how to turn it
// on, and no error.
func readGoroutineLeaks(ctx context.Context, base string) (rows []goroutineLeakRow, note string, err error) {
	r, err := goleak.Read(ctx, base, goleak.Options{})
	if err != nil {
		return nil, "", err
	}
	rows = make([]goroutineLeakRow, len(r.Rows))
	for i, g := range r.Rows {
		rows[i] = goroutineLeakRow{Stack: g.Stack, Count: g.Count, ArenaBytes: g.ArenaBytes, Arenas: g.Arenas}
	}
	return rows, redactText(r.Note), nil
}

// writeGoroutineLeaksTable prints the leaked goroutines by stack, most
// first, with the arenas they hold; note, when not empty, comes first.
// Each stack is shown from the first frame outside the runtime (where
// the goroutine waits), leaf first.
func writeGoroutineLeaksTable(w io.Writer, rows []goroutineLeakRow, note string) {
	if note != "" {
		fmt.Fprintln(w, "note: "+tabfmt.Printable(note))
	}
	var total, arenas, bytes int64
	for _, r := range rows {
		total, arenas, bytes = total+r.Count, arenas+r.Arenas, bytes+r.ArenaBytes
	}
	if len(rows) == 0 {
		if note == "" {
			fmt.Fprintln(w, "leaked goroutines: none")
		}
		return
	}
	fmt.Fprintf(w, "leaked goroutines: %d in %d stacks, holding %d arenas of %s (exact)\n\n", total, len(rows), arenas, tabfmt.Bytes(float64(bytes)))
	t := tabfmt.New(w)
	t.Row([]string{"GOROUTINES", "ARENAS", "ARENA BYTES"}, "STACK (leaf first)")
	for _, r := range rows {
		t.Row([]string{strconv.FormatInt(r.Count, 10), strconv.FormatInt(r.Arenas, 10), tabfmt.Bytes(float64(r.ArenaBytes))},
			tabfmt.CutKey(strings.Join(userFrames(r.Stack), " < "), "stack", 100))
	}
	t.Row([]string{strconv.FormatInt(total, 10), strconv.FormatInt(arenas, 10), tabfmt.Bytes(float64(bytes))}, "total")
	_ = t.Flush()
}

// userFrames drops the leaf frames of the runtime (gopark, chanrecv and
// the like) from a stack, and its root runtime.goexit: what is left starts
// where the goroutine waits. A stack all in the runtime is kept whole.
func userFrames(stack []string) []string {
	s := stack
	for len(s) > 0 && strings.HasPrefix(s[0], "runtime.") {
		s = s[1:]
	}
	if len(s) > 0 && s[len(s)-1] == "runtime.goexit" {
		s = s[:len(s)-1]
	}
	if len(s) == 0 {
		return stack
	}
	return s
}
