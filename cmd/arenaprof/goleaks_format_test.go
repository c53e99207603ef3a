package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestUserFrames(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"runtime.gopark", "runtime.chanrecv1", "main.f", "main.g", "runtime.goexit"}, []string{"main.f", "main.g"}},
		{[]string{"runtime.gopark", "runtime.chanrecv1", "main.f"}, []string{"main.f"}},
		{[]string{"runtime.gopark", "runtime.goexit"}, []string{"runtime.gopark", "runtime.goexit"}},
		{[]string{"main.f", "runtime.main"}, []string{"main.f", "runtime.main"}},
		{nil, nil},
	} {
		if got := userFrames(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("userFrames(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestWriteGoroutineLeaksTable(t *testing.T) {
	rows := []goroutineLeakRow{
		{Stack: []string{"runtime.gopark", "example.com/svc/pkg.worker", "example.com/svc/pkg.run"}, Count: 5, Arenas: 2, ArenaBytes: 131088},
		{Stack: []string{"runtime.gopark", "main.wait\tx"}, Count: 1},
	}
	for _, tc := range []struct {
		name string
		rows []goroutineLeakRow
		note string
		want []string
	}{
		{"rows", rows, "", []string{"leaked goroutines: 6 in 2 stacks, holding 2 arenas of 128KiB (exact)", "example.com/svc/pkg.worker < example.com/svc/pkg.run", "main.wait?x", "       6       2       128KiB  total"}},
		{"none", []goroutineLeakRow{}, "", []string{"leaked goroutines: none"}},
		{"not available", []goroutineLeakRow{}, "http://h serves no /debug/pprof/goroutineleak: Go 1.27", []string{"note: http://h serves no /debug/pprof/goroutineleak: Go 1.27\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeGoroutineLeaksTable(&b, tc.rows, tc.note)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
			if tc.note != "" && strings.Contains(b.String(), "none") {
				t.Errorf("a read that could not be made says none:\n%s", b.String())
			}
		})
	}
}
