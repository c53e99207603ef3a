package main

import (
	"fmt"
	"io"
)

func runTop(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "arenaprof top: not built yet")
	return 1
}
