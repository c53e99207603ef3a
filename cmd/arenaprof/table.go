package main

import (
	"os"
	"strconv"
)

// terminalWidth is the width keys are cut to: when standard output is a
// terminal, $COLUMNS, or 80 when it is not set; otherwise 0, keys whole
// (a file or a pipe gets every key whole).
func terminalWidth() int {
	fi, err := os.Stdout.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return 0
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return 80
}
