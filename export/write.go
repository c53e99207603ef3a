package export

import (
	"compress/gzip"
	"io"
	"sync"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// writeProfile writes prof to w gzipped at gzip.BestSpeed. pprof readers
// accept any gzip level; the default level spends most of an export's time
// in deflate for a few percent of size. The protocol buffer is streamed
// (see encodeProfile), never held whole in memory.
func writeProfile(w io.Writer, prof *profile.Profile) error {
	gz := gzipWriters.Get().(*gzip.Writer)
	gz.Reset(w)
	defer gzipWriters.Put(gz)
	if err := encodeProfile(gz, prof); err != nil {
		return err
	}
	return gz.Close()
}

// gzipWriters keeps gzip writers between profiles: a new one allocates
// about 600 KB of compressor state, a tenth of the memory of serving a
// profile of a full collector.
var gzipWriters = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level: no error
	return gz
}}

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
