package export

import (
	"io"
	"reflect"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofenc"
	"github.com/arenaprof/arenaprof/profiler"
)

// writeProfile writes prof to w gzipped (see pprofenc.WriteGzip). The protocol buffer is streamed, never held whole
// in memory.
func writeProfile(w io.Writer, prof *profile.Profile) error {
	return pprofenc.WriteGzip(w, prof, nil)
}

// Write writes the profile of a snapshot (see [Build]) to w in pprof's
// gzip-compressed protocol buffer format, ready for go tool pprof:
//
//	err := export.Write(f, p.Snapshot())
func Write(w io.Writer, s *profiler.Snapshot) error {
	prof, err := Build(s)
	if err != nil {
		return err
	}
	return writeProfile(w, prof)
}

// mapPointer returns the address of a map, which identifies a label map
// that samples share.
func mapPointer[M any](m M) uintptr {
	return uintptr(reflect.ValueOf(m).UnsafePointer())
}
