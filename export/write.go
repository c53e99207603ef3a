package export

import (
	"compress/gzip"
	"io"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// writeProfile writes prof to w gzipped at gzip.BestSpeed. pprof readers
// accept any gzip level; the default level spends most of an export's time
// in deflate for a few percent of size. The protocol buffer is streamed
// (see encodeProfile), never held whole in memory.
func writeProfile(w io.Writer, prof *profile.Profile) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if err := encodeProfile(gz, prof); err != nil {
		return err
	}
	return gz.Close()
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
