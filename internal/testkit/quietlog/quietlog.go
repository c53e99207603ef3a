// Package quietlog keeps what a test binary logs through slog.Default (and
// the standard log package, which slog.SetDefault routes there) out of its
// output unless a test fails: agents started without a Logger warn through
// slog.Default, and a passing run should print only its results.
package quietlog

import (
	"bytes"
	"log/slog"
	"os"
	"sync"
	"testing"
)

// Run runs m with slog.Default writing into a buffer, restores the default
// logger, writes the buffer to standard error if the run failed, and
// returns m.Run's exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(quietlog.Run(m)) }
func Run(m *testing.M) int {
	var buf syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	code := m.Run()
	slog.SetDefault(old)
	if code != 0 && buf.Len() > 0 {
		os.Stderr.WriteString("--- log lines of the run (slog.Default), held back while it passed:\n")
		buf.WriteTo(os.Stderr)
	}
	return code
}

// syncBuffer is a bytes.Buffer safe for the goroutines that log at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *syncBuffer) WriteTo(w *os.File) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.Write(b.buf.Bytes())
}
