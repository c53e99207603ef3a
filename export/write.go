package export

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/profiler"
)

// writeProfile writes prof to w gzipped at gzip.BestSpeed. pprof readers
// accept any gzip level; the default level spends most of an export's time
// in deflate for a few percent of size.
func writeProfile(w io.Writer, prof *profile.Profile) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if err := prof.WriteUncompressed(gz); err != nil {
		return err
	}
	return gz.Close()
}

// Write writes the profile of everything p has seen since it started to w,
// in pprof's gzipped protocol buffer format.
func Write(w io.Writer, p *profiler.Profiler) error {
	prof, err := Build(p)
	if err != nil {
		return err
	}
	return writeProfile(w, prof)
}

// WriteSnapshot writes the profile of a snapshot (cumulative or delta) to w.
func WriteSnapshot(w io.Writer, s *profiler.Snapshot) error {
	prof, err := BuildSnapshot(s)
	if err != nil {
		return err
	}
	return writeProfile(w, prof)
}

// WriteFile writes the profile of everything p has seen since it started
// to the file at path, replacing it atomically: the profile is written to a
// temporary file in the same directory, which is then renamed. Readers never
// see a partial profile.
func WriteFile(path string, p *profiler.Profiler) error {
	if p == nil {
		return errors.New("export: nil profiler")
	}
	return WriteSnapshotFile(path, p.Snapshot())
}

// WriteSnapshotFile is [WriteFile] for a snapshot.
func WriteSnapshotFile(path string, s *profiler.Snapshot) (err error) {
	if path == "" {
		return errors.New("export: empty file name")
	}
	prof, err := BuildSnapshot(s)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = writeProfile(f, prof); err != nil {
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
