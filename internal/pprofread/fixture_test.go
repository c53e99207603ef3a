package pprofread

import (
	"io"

	"github.com/google/pprof/profile"
)

// parse is Read without the cost: what report.Parse returns.
func parse(r io.Reader, o Options) (*profile.Profile, error) {
	p, _, err := Read(r, o)
	return p, err
}
