package main

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// TestTerminalWidthFromPty reads the width from a real terminal: a
// pseudo-terminal set to 220 columns stands for standard output, as an
// xterm of that width would, with $COLUMNS unset (bash does not export
// it) and then set.
func TestTerminalWidthFromPty(t *testing.T) {
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptm.Close()
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 220}); err != nil {
		t.Fatal(err)
	}
	if !term.IsTerminal(int(pts.Fd())) {
		t.Fatal("the pseudo-terminal is no terminal to term.IsTerminal")
	}
	stdout := os.Stdout
	os.Stdout = pts
	defer func() { os.Stdout = stdout }()
	t.Setenv("COLUMNS", "")
	if got := terminalWidth(); got != 220 {
		t.Errorf("width %d on a 220-column terminal, want 220", got)
	}
	t.Setenv("COLUMNS", "100")
	if got := terminalWidth(); got != 100 {
		t.Errorf("width %d with COLUMNS=100, want 100", got)
	}
}
