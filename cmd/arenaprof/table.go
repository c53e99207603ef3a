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

// fullUsage documents -full and the key rule, for top and diff.
const fullUsage = `  -full print group keys whole on a terminal too. Keys (function names
        with their import path, github.com/x/y.(*T).M; stacks; types) come
        last on each line. Printed to a terminal they are cut in the middle
        to fit its width ($COLUMNS, 80 if unset), marked by …, keeping the
        last package element and the function of a function name; printed
        to a file or a pipe they are always whole
`
