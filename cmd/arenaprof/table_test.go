package main

import (
	"errors"
	"testing"
)

// TestWidthOf: $COLUMNS overrides the terminal's own width, which is used
// when $COLUMNS is unset or not a positive number; 80 when the terminal
// cannot tell; 0 (keys whole) when the output is no terminal.
func TestWidthOf(t *testing.T) {
	size := func(w int, err error) func() (int, error) {
		return func() (int, error) { return w, err }
	}
	noSize := errors.New("inappropriate ioctl for device")
	for _, c := range []struct {
		name    string
		isTerm  bool
		columns string
		size    func() (int, error)
		want    int
	}{
		{"pipe", false, "", size(220, nil), 0},
		{"pipe, COLUMNS", false, "120", size(220, nil), 0},
		{"terminal", true, "", size(220, nil), 220},
		{"COLUMNS overrides", true, "100", size(220, nil), 100},
		{"COLUMNS not a number", true, "wide", size(220, nil), 220},
		{"COLUMNS zero", true, "0", size(220, nil), 220},
		{"COLUMNS negative", true, "-5", size(220, nil), 220},
		{"no size", true, "", size(0, noSize), 80},
		{"zero size", true, "", size(0, nil), 80},
		{"no size, COLUMNS", true, "132", size(0, noSize), 132},
	} {
		if got := widthOf(c.isTerm, c.columns, c.size); got != c.want {
			t.Errorf("%s: width %d, want %d", c.name, got, c.want)
		}
	}
}
