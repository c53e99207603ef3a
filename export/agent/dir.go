package agent

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// defaultDirMaxFiles is the retention bound by count when
// DirConfig.MaxFiles is zero.
const defaultDirMaxFiles = 10000

// DirConfig configures a directory destination.
type DirConfig struct {
	// Path is the directory; it is created (with parents) if missing.
	Path string
	// MaxFiles bounds the number of profile files kept: before each write
	// the oldest are deleted to make room for the new file. Zero selects
	// 10000; negative means no bound by count.
	MaxFiles int
	// MaxBytes bounds the total size of the profile files kept, the new
	// file included (a new file larger than the bound is still written,
	// alone). Zero or negative means no bound by size.
	MaxBytes int64
}

// dirUploader is the destination NewDir returns.
type dirUploader struct {
	path     string
	maxFiles int
	maxBytes int64

	mu sync.Mutex
	// write is the file write used by Upload; tests replace it to simulate
	// a full disk.
	write func(f *os.File, data []byte) (int, error)
}

// NewDir returns a destination that writes each profile to its own file in
// a directory, creating the directory if needed (it fails if the path
// exists and is not a directory):
//
//	20261121T194500.123Z-APP-KEY=VALUE,...-PROFILE.pb.gz
//
// The time is the end of the interval in UTC, so names sort by time; the
// label part is left out when there are no labels. Every component is
// sanitised: bytes other than ASCII letters, digits, '.', '_' and '-' become
// '_', and long components are cut and suffixed with a hash, so no label or
// application name can produce a path separator, a NUL, a leading dot or a
// name longer than the file system allows. Files are written to a temporary
// file in the same directory and renamed into place, so a reader never sees
// a partial profile. Retention (by count and by bytes) runs before each
// write: it deletes the oldest files whose names follow this pattern until
// the new file fits the bounds, so on a disk that the bounds fill the
// space is freed before it is needed. It never touches other files: give
// each service its own directory.
//
// Write errors (read-only directory, disk full) are not retried: the
// profile is counted as failed and the next interval tries again.
func NewDir(cfg DirConfig) (Uploader, error) { return uploader(newDir(cfg)) }

func newDir(cfg DirConfig) (*dirUploader, error) {
	if cfg.Path == "" {
		return nil, errors.New("agent: DirConfig.Path is empty")
	}
	if strings.IndexByte(cfg.Path, 0) >= 0 {
		return nil, errors.New("agent: DirConfig.Path contains a NUL byte")
	}
	if err := os.MkdirAll(cfg.Path, 0o755); err != nil {
		return nil, fmt.Errorf("agent: profile directory: %w", err)
	}
	fi, err := os.Stat(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("agent: profile directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("agent: profile directory %s is not a directory", cfg.Path)
	}
	// A read-only directory would fail every upload later; say so now.
	probe, err := os.CreateTemp(cfg.Path, ".arenaprof-probe-*")
	if err != nil {
		return nil, fmt.Errorf("agent: profile directory %s is not writable: %w", cfg.Path, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return nil, fmt.Errorf("agent: profile directory %s: removing the write probe: %w", cfg.Path, err)
	}
	d := &dirUploader{path: cfg.Path, maxFiles: cfg.MaxFiles, maxBytes: cfg.MaxBytes}
	if d.maxFiles == 0 {
		d.maxFiles = defaultDirMaxFiles
	}
	d.write = func(f *os.File, data []byte) (int, error) { return f.Write(data) }
	return d, nil
}

// String names the destination in stats and logs.
func (d *dirUploader) String() string { return "dir:" + d.path }

// Upload applies the retention bounds, making room for u, then writes u to
// a new file.
func (d *dirUploader) Upload(ctx context.Context, u *Upload) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	name := fileName(u.AppName, u.Labels, u.Profile, u.Until)
	final := filepath.Join(d.path, name)
	// Two intervals ending in the same millisecond (a very short interval,
	// or the final partial one) get distinct names.
	for i := 2; ; i++ {
		_, err := os.Lstat(final)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return fmt.Errorf("agent: writing profile: %w", err)
		}
		if i > 1000 {
			return fmt.Errorf("agent: writing profile: %s and 999 variants exist", name)
		}
		final = filepath.Join(d.path, strings.TrimSuffix(name, fileSuffix)+fmt.Sprintf("-%d", i)+fileSuffix)
	}
	// Make room first: on a disk the bounds fill, retaining only after a
	// successful write would never free the space the write needs.
	retainErr := d.retain(int64(len(u.Data)))
	if err := d.writeFile(final, u.Data); err != nil {
		if retainErr != nil {
			return fmt.Errorf("%w (retention before it: %v)", err, retainErr)
		}
		return err
	}
	if retainErr != nil {
		return fmt.Errorf("agent: dir retention: %w", retainErr)
	}
	return nil
}

func (d *dirUploader) writeFile(final string, data []byte) (err error) {
	f, err := os.CreateTemp(d.path, tmpPrefix+"*.tmp")
	if err != nil {
		return fmt.Errorf("agent: writing profile: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	n, err := d.write(f, data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		return fmt.Errorf("agent: writing profile %s: %w", filepath.Base(final), err)
	}
	return nil
}

// retain deletes the oldest profile files until one more file of size
// incoming fits the bounds (or no profile file is left).
func (d *dirUploader) retain(incoming int64) error {
	if d.maxFiles < 0 && d.maxBytes <= 0 {
		return nil
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return err
	}
	type file struct {
		name string
		size int64
	}
	var files []file
	var total int64
	for _, e := range ents {
		if !e.Type().IsRegular() || !isProfileFileName(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		files = append(files, file{e.Name(), fi.Size()})
		total += fi.Size()
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	var errs []error
	for len(files) > 0 && ((d.maxFiles >= 0 && len(files)+1 > d.maxFiles) || (d.maxBytes > 0 && total+incoming > d.maxBytes)) {
		if err := os.Remove(filepath.Join(d.path, files[0].name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		total -= files[0].size
		files = files[1:]
	}
	return errors.Join(errs...)
}

const (
	fileSuffix = ".pb.gz"
	tmpPrefix  = ".arenaprof-"
	timeLayout = "20060102T150405.000Z"
	// maxComponent, maxLabelsComponent and maxProfileComponent bound the
	// sanitised components of a file name (application, labels, profile),
	// keeping names under the usual 255-byte limit: 20 for the time, 64,
	// 96 and 40 for the components, 3 dashes, a "-N" suffix for names
	// taken, and ".pb.gz".
	maxComponent        = 64
	maxLabelsComponent  = 96
	maxProfileComponent = 40
)

// fileName returns the file name NewDir's destination gives a profile: the end of its
// interval in UTC, the application, the labels (sorted by key) and the
// profile name, each sanitised. The result is a single path element that
// sorts by time.
func fileName(app string, labels map[string]string, profileName string, until time.Time) string {
	var b strings.Builder
	until = until.UTC()
	// Keep the year to four digits so that names keep sorting by time.
	if lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); until.Before(lo) {
		until = lo
	} else if hi := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC); until.After(hi) {
		until = hi
	}
	b.WriteString(until.Format(timeLayout))
	b.WriteByte('-')
	b.WriteString(sanitizeComponent(app))
	if len(labels) > 0 {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var lb strings.Builder
		for i, k := range keys {
			if i > 0 {
				lb.WriteByte(',')
			}
			lb.WriteString(sanitizeBytes(k))
			lb.WriteByte('=')
			lb.WriteString(sanitizeBytes(labels[k]))
		}
		b.WriteByte('-')
		b.WriteString(shorten(lb.String(), maxLabelsComponent))
	}
	b.WriteByte('-')
	b.WriteString(shorten(sanitizeBytes(profileName), maxProfileComponent))
	b.WriteString(fileSuffix)
	return b.String()
}

// isProfileFileName reports whether name follows the pattern of fileName.
func isProfileFileName(name string) bool {
	if !strings.HasSuffix(name, fileSuffix) || len(name) < len(timeLayout)+len(fileSuffix) {
		return false
	}
	_, err := time.Parse(timeLayout, name[:len(timeLayout)])
	return err == nil
}

// sanitizeComponent makes s safe as part of a file name: see sanitizeBytes,
// then shorten; empty becomes "_".
func sanitizeComponent(s string) string {
	return shorten(sanitizeBytes(s), maxComponent)
}

// sanitizeBytes replaces every byte other than ASCII letters, digits, '.',
// '_' and '-' with '_' (a multi-byte character becomes one '_' per byte, so
// distinct inputs of equal length stay distinct more often). An empty
// string becomes "_".
func sanitizeBytes(s string) string {
	if s == "" {
		return "_"
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// shorten cuts s to at most n bytes, replacing the tail with '~' and a hash
// of the whole of s so that different long inputs keep different names.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	sum := fmt.Sprintf("~%016x", h.Sum64())
	return s[:n-len(sum)] + sum
}
