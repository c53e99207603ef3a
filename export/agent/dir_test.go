package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestDirAgentWritesFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles", "nested")
	dir, err := newDir(DirConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	src := &testSource{name: "arena"}
	cfg := fastConfig([]Source{src, WallSource()}, dir)
	// Every profile kept: each file is synced, and on a loaded machine the
	// writes fall 20 profiles behind the 20 ms collections.
	cfg.QueueSize = maxQueueSize
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 intervals", func() bool { return a.Stats().Uploaded >= 6 })
	stopAgent(t, a)
	s := a.Stats()
	checkBalance(t, s)
	if s.Failed != 0 || s.Dropped != 0 {
		t.Fatalf("stats %+v", s)
	}
	names := profileFiles(t, path)
	if uint64(len(names)) != s.Uploaded {
		t.Fatalf("%d files for %d uploads: %v", len(names), s.Uploaded, names)
	}
	if !slices.IsSorted(names) {
		t.Fatalf("names do not sort: %v", names)
	}
	var arena, wall int
	var lastArena int64
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(path, n))
		if err != nil {
			t.Fatal(err)
		}
		p := mustParse(t, data)
		switch {
		case strings.HasSuffix(n, "-shop-env=test,region=eu-1-arena.pb.gz"):
			arena++
			// Files sorted by name hold the intervals in order.
			v := sampleValue(t, p, "alloc_samples")
			if v <= lastArena {
				t.Fatalf("%s holds interval %d after %d", n, v, lastArena)
			}
			lastArena = v
		case strings.HasSuffix(n, "-shop-env=test,region=eu-1-wall.pb.gz"):
			wall++
			if p.PeriodType.Type != "wallclock" || p.PeriodType.Unit != "nanoseconds" {
				t.Fatalf("%s: period type %v", n, p.PeriodType)
			}
		default:
			t.Fatalf("unexpected file name %q", n)
		}
	}
	if arena == 0 || arena != wall {
		t.Fatalf("%d arena files, %d wall files", arena, wall)
	}
	// No temporary file is left.
	ents, _ := os.ReadDir(path)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func profileFiles(t *testing.T, path string) []string {
	t.Helper()
	ents, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if isProfileFileName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestFileName(t *testing.T) {
	until := time.Date(2026, 11, 21, 19, 45, 0, 123e6, time.FixedZone("X", 3600))
	tests := []struct {
		app     string
		labels  map[string]string
		profile string
		want    string
	}{
		{"shop", nil, "arena", "20261121T184500.123Z-shop-arena.pb.gz"},
		{"shop", map[string]string{"region": "eu", "env": "prod"}, "wall", "20261121T184500.123Z-shop-env=prod,region=eu-wall.pb.gz"},
		{"../../etc", map[string]string{"p": "../x/y"}, "heap", "20261121T184500.123Z-.._.._etc-p=.._x_y-heap.pb.gz"},
		{"a b\x00c", map[string]string{"k": "ü"}, "cpu", "20261121T184500.123Z-a_b_c-k=__-cpu.pb.gz"},
		{"", map[string]string{"k": "a,b=c"}, "", "20261121T184500.123Z-_-k=a_b_c-_.pb.gz"},
	}
	for _, tt := range tests {
		got := fileName(tt.app, tt.labels, tt.profile, until)
		if got != tt.want {
			t.Errorf("fileName(%q, %v, %q) = %q, want %q", tt.app, tt.labels, tt.profile, got, tt.want)
		}
		checkSafeName(t, got)
	}
	long := strings.Repeat("x", 1000)
	a := fileName(long+"1", map[string]string{"k": long + "a"}, "arena", until)
	b := fileName(long+"2", map[string]string{"k": long + "b"}, "arena", until)
	checkSafeName(t, a)
	if a == b {
		t.Fatalf("long names collide: %s", a)
	}
}

// checkSafeName checks that name is one harmless path element that Dir
// recognises as its own.
func checkSafeName(t *testing.T, name string) {
	t.Helper()
	if len(name) > 255 || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, ".") ||
		!utf8.ValidString(name) || filepath.Base(name) != name || !isProfileFileName(name) {
		t.Fatalf("unsafe or unrecognised file name %q", name)
	}
	for _, c := range []byte(name) {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("file name %q has byte %#x", name, c)
		}
	}
}

// TestDirLabelsCannotEscape writes profiles whose app name and labels try
// to escape the directory; every file lands inside it.
func TestDirLabelsCannotEscape(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "d")
	dir, err := newDir(DirConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	evil := []string{"..", "../..", "/etc/passwd", "a/../../b", "\x00", " ", "ü/ü", "..\\..\\x", strings.Repeat("../", 200)}
	for i, s := range evil {
		u := &Upload{AppName: s, Labels: map[string]string{"k": s}, Profile: s, Until: time.Unix(int64(i), 0), Data: []byte("x")}
		if err := dir.Upload(context.Background(), u); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	if n := len(profileFiles(t, path)); n != len(evil) {
		t.Fatalf("%d files in the directory, want %d", n, len(evil))
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Fatalf("files escaped into the parent: %v", ents)
	}
}

func TestDirRetention(t *testing.T) {
	tests := []struct {
		name      string
		maxFiles  int
		maxBytes  int64
		wantFiles int
	}{
		{"by count", 3, 0, 3},
		{"by bytes", -1, 250, 2}, // 100-byte files: 2 fit under 250
		{"both, bytes tighter", 4, 150, 1},
		{"newest always kept", -1, 10, 1},
		{"unbounded", -1, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := t.TempDir()
			// A foreign file is never deleted.
			if err := os.WriteFile(filepath.Join(path, "README"), []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			dir, err := newDir(DirConfig{Path: path, MaxFiles: tt.maxFiles, MaxBytes: tt.maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for i := range 10 {
				u := &Upload{AppName: "a", Profile: "arena", Until: time.Unix(1000+int64(i), 0), Data: make([]byte, 100)}
				all = append(all, fileName(u.AppName, nil, u.Profile, u.Until))
				if err := dir.Upload(context.Background(), u); err != nil {
					t.Fatal(err)
				}
			}
			got := profileFiles(t, path)
			if want := all[len(all)-tt.wantFiles:]; !slices.Equal(got, want) {
				t.Fatalf("kept %v, want the newest %d: %v", got, tt.wantFiles, want)
			}
			if _, err := os.Stat(filepath.Join(path, "README")); err != nil {
				t.Fatal("foreign file deleted")
			}
		})
	}
}

func TestDirSameMillisecond(t *testing.T) {
	dir, err := newDir(DirConfig{Path: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	until := time.Unix(5, 0)
	for range 3 {
		if err := dir.Upload(context.Background(), &Upload{AppName: "a", Profile: "arena", Until: until, Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(profileFiles(t, dir.path)); n != 3 {
		t.Fatalf("%d files, want 3 distinct", n)
	}
}

func TestNewDirErrors(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", f, filepath.Join(f, "sub"), "a\x00b"} {
		if _, err := newDir(DirConfig{Path: p}); err == nil {
			t.Errorf("newDir(%q) succeeded", p)
		}
	}
}

// unwritable makes path reject new files and reports how: chmod when it is
// effective (not root), otherwise by replacing the directory with a regular
// file so that creating files under it fails with ENOTDIR.
func unwritable(t *testing.T, path string) string {
	t.Helper()
	if err := os.Chmod(path, 0o555); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(path, "probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Cleanup(func() { os.Chmod(path, 0o755) })
		return "chmod 0555"
	}
	// Running as root: permissions do not apply.
	os.Chmod(path, 0o755)
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	return "path replaced by a regular file"
}

// TestDirUnwritable: a directory that refuses writes fails every upload
// without retries; nothing is dropped, nothing is queued, and the agent
// keeps collecting.
func TestDirUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p")
	dir, err := newDir(DirConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	how := unwritable(t, path)
	var logs syncBuffer
	cfg := fastConfig([]Source{&testSource{name: "arena"}}, dir)
	cfg.Logger = debugLogger(&logs)
	a, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 failures", func() bool { return a.Stats().Failed >= 3 })
	stopAgent(t, a)
	s := a.Stats()
	checkBalance(t, s)
	if s.Uploaded != 0 || s.Retried != 0 || s.Dropped != 0 || s.Failed != s.Collected {
		t.Fatalf("%s: stats %+v", how, s)
	}
	if !strings.Contains(logs.String(), "upload failed") {
		t.Fatalf("%s: failure not logged", how)
	}
}

// TestDirFull simulates ENOSPC on write: the upload fails, the temporary
// file is removed, the counters say so, and writes succeed again once
// space is back.
func TestDirFull(t *testing.T) {
	path := t.TempDir()
	dir, err := newDir(DirConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	full := true
	dir.write = func(f *os.File, data []byte) (int, error) {
		if full {
			n, _ := f.Write(data[:len(data)/2])
			return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
		return f.Write(data)
	}
	u := &Upload{AppName: "a", Profile: "arena", Until: time.Unix(1, 0), Data: make([]byte, 1000)}
	err = dir.Upload(context.Background(), u)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want ENOSPC", err)
	}
	if ok, _ := isRetryable(err); ok {
		t.Fatal("a full disk is not retried")
	}
	ents, _ := os.ReadDir(path)
	if len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}

	// Through the agent: every profile fails while the disk is full.
	dir.mu.Lock()
	full = true
	dir.mu.Unlock()
	a, err := Start(fastConfig([]Source{&testSource{name: "arena"}}, dir))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "2 failures", func() bool { return a.Stats().Failed >= 2 })
	dir.mu.Lock()
	full = false
	dir.mu.Unlock()
	waitFor(t, "2 uploads", func() bool { return a.Stats().Uploaded >= 2 })
	stopAgent(t, a)
	s := a.Stats()
	checkBalance(t, s)
	if s.Dropped != 0 || s.Retried != 0 || s.Uploaded+s.Failed != s.Collected {
		t.Fatalf("stats %+v", s)
	}
	if n := uint64(len(profileFiles(t, path))); n != s.Uploaded {
		t.Fatalf("%d files for %d uploads", n, s.Uploaded)
	}
	for _, e := range mustReadDir(t, path) {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

// TestDirFullDiskRetentionFirst simulates a disk that the retention bounds
// fill: the write hook fails with ENOSPC when the profile files already in
// the directory plus the new one exceed the disk's capacity. Retention must
// run before the write and free the space; run only after a successful
// write, it would never run again once the disk is full.
func TestDirFullDiskRetentionFirst(t *testing.T) {
	const size = 100
	tests := []struct {
		name      string
		maxFiles  int
		maxBytes  int64
		capacity  int64 // bytes of profile files the disk holds
		wantFiles int
	}{
		{"by bytes, bound equals the disk", -1, 300, 300, 3},
		{"by bytes, disk just above the bound", -1, 300, 350, 3},
		{"by count, bound fills the disk", 4, 0, 400, 4},
		{"both bounds", 3, 250, 300, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := t.TempDir()
			dir, err := newDir(DirConfig{Path: path, MaxFiles: tt.maxFiles, MaxBytes: tt.maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			dir.write = func(f *os.File, data []byte) (int, error) {
				var used int64
				for _, name := range profileFiles(t, path) {
					fi, err := os.Stat(filepath.Join(path, name))
					if err != nil {
						return 0, err
					}
					used += fi.Size()
				}
				if used+int64(len(data)) > tt.capacity {
					return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
				}
				return f.Write(data)
			}
			var all []string
			for i := range 10 {
				u := &Upload{AppName: "a", Profile: "arena", Until: time.Unix(2000+int64(i), 0), Data: make([]byte, size)}
				all = append(all, fileName(u.AppName, nil, u.Profile, u.Until))
				if err := dir.Upload(context.Background(), u); err != nil {
					t.Fatalf("upload %d on a disk the bounds fill: %v", i, err)
				}
			}
			if got, want := profileFiles(t, path), all[len(all)-tt.wantFiles:]; !slices.Equal(got, want) {
				t.Fatalf("kept %v, want the newest %d: %v", got, tt.wantFiles, want)
			}
		})
	}
}

func mustReadDir(t *testing.T, path string) []os.DirEntry {
	t.Helper()
	ents, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// TestNewDirRejectsReadOnly: a directory the process cannot write to is
// reported at construction, not at the first upload.
func TestNewDirRejectsReadOnly(t *testing.T) {
	// /proc/self is a directory no process, not even root, can create a
	// file in: the check runs even where permission bits do not bind.
	if fi, err := os.Stat("/proc/self"); err == nil && fi.IsDir() {
		if _, err := newDir(DirConfig{Path: "/proc/self"}); err == nil || !strings.Contains(err.Error(), "not writable") {
			t.Errorf("newDir(/proc/self): %v", err)
		}
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: permission bits do not stop writes; only the /proc case ran")
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if _, err := newDir(DirConfig{Path: dir}); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("NewDir on a read-only directory: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := newDir(DirConfig{Path: dir}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("probe left behind: %v", ents)
	}
}
