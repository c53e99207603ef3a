package main

import (
	"fmt"
	"io"
)

func runInterval(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "arenaprof interval: not built yet")
	return 1
}
