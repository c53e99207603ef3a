package main

import (
	"bytes"

	"github.com/arenaprof/arenaprof/report"
)

// decodeArenaProfile parses data read from src and checks that it is an
// arenaprof profile, as loadArenaProfile does with what it reads.
func decodeArenaProfile(src string, data []byte, max int64) (*arenaProfile, error) {
	return decodeArenaFrom(&profileSource{shown: src, r: bytes.NewReader(data)}, report.ParseOptions{MaxBytes: max})
}
