package main

import (
	"os"
	"strconv"

	"golang.org/x/term"
)

// terminalWidth is the width keys are cut to when standard output is a
// terminal: $COLUMNS when it is set (bash sets it without exporting it, so
// it is an override), else the width the terminal itself reports, else 80.
// Printed to a file or a pipe, keys are whole: 0.
func terminalWidth() int {
	fd := int(os.Stdout.Fd())
	return widthOf(term.IsTerminal(fd), os.Getenv("COLUMNS"), func() (int, error) {
		w, _, err := term.GetSize(fd)
		return w, err
	})
}

// widthOf is terminalWidth's rule: isTerm tells whether the output is a
// terminal, columns is $COLUMNS, size asks the terminal for its width.
func widthOf(isTerm bool, columns string, size func() (int, error)) int {
	if !isTerm {
		return 0
	}
	if c, err := strconv.Atoi(columns); err == nil && c > 0 {
		return c
	}
	if w, err := size(); err == nil && w > 0 {
		return w
	}
	return 80
}

// fullUsage documents -full and the key rule, for top and diff.
const fullUsage = `  -full print group keys whole on a terminal too. Keys (function names
        with their import path, github.com/x/y.(*T).M; stacks; types) come
        last on each line. Printed to a terminal they are cut in the middle
        to fit its width ($COLUMNS if set, else the terminal's own width),
        marked by …, keeping the last package element and the function of a
        function name; a stack drops its import paths and keeps its leaf
        function whole, cutting the root side; printed to a file or a pipe
        they are always whole
`
