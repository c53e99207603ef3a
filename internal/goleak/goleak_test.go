package goleak

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofread"
)

// stack is a test stack, leaf first: "fn:line" frames.
type stack []string

// builder makes profiles whose samples have the given stacks.
type builder struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
}

func newBuilder(types ...string) *builder {
	b := &builder{p: &profile.Profile{}, funcs: map[string]*profile.Function{}}
	for _, t := range types {
		unit := "count"
		if strings.HasSuffix(t, "_space") {
			unit = "bytes"
		}
		b.p.SampleType = append(b.p.SampleType, &profile.ValueType{Type: t, Unit: unit})
	}
	return b
}

func (b *builder) add(st stack, labels map[string][]string, values ...int64) *builder {
	s := &profile.Sample{Value: values, Label: labels}
	for _, f := range st {
		name, line, _ := strings.Cut(f, ":")
		fn := b.funcs[name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(b.funcs) + 1), Name: name}
			b.funcs[name] = fn
			b.p.Function = append(b.p.Function, fn)
		}
		var n int64
		for _, c := range line {
			n = n*10 + int64(c-'0')
		}
		loc := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: fn, Line: n}}}
		b.p.Location = append(b.p.Location, loc)
		s.Location = append(s.Location, loc)
	}
	b.p.Sample = append(b.p.Sample, s)
	return b
}

var park = stack{"runtime.gopark:1", "runtime.chanrecv:2", "runtime.chanrecv1:3"}

func leaked(frames ...string) stack { return append(slices.Clone(park), frames...) }

// deep returns n frames of main.f at line 10, leaf first.
func deep(n int) stack {
	s := make(stack, n)
	for i := range s {
		s[i] = "main.f:10"
	}
	return s
}

func TestJoin(t *testing.T) {
	idle := map[string][]string{"pool_idle": {"true"}, "pool": {"1"}}
	for _, tc := range []struct {
		name   string
		leaks  *builder
		arenas *builder // nil: no live-arenas profile
		want   []Row
	}{
		{
			name:  "taken where it waits",
			leaks: newBuilder("goroutineleak").add(leaked("main.holder:53", "main.run:20"), nil, 5),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(stack{"main.holder:48", "main.run:20"}, nil, 5000, 100, 5),
			want: []Row{{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.holder", "main.run"}, Count: 5, Arenas: 5, ArenaBytes: 5000}},
		},
		{
			name:  "taken from another call site of the caller",
			leaks: newBuilder("goroutineleak").add(leaked("main.holder:53", "main.run:20"), nil, 1),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(stack{"main.holder:48", "main.run:21"}, nil, 5000, 100, 5),
			want: []Row{{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.holder", "main.run"}, Count: 1}},
		},
		{
			name:  "taken by a function that returned",
			leaks: newBuilder("goroutineleak").add(leaked("main.run:22"), nil, 1),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(stack{"main.take:5", "main.run:21"}, nil, 5000, 100, 5),
			want: []Row{{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.run"}, Count: 1}},
		},
		{
			name:  "taken by another goroutine's root",
			leaks: newBuilder("goroutineleak").add(leaked("main.holder:53", "main.run:20"), nil, 1),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(stack{"main.holder:48", "main.run:20", "main.main:3"}, nil, 5000, 100, 5),
			want: []Row{{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.holder", "main.run"}, Count: 1}},
		},
		{
			name:  "idle arenas of a pool are nobody's",
			leaks: newBuilder("goroutineleak").add(leaked("main.holder:53"), nil, 2),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(stack{"main.holder:48"}, idle, 9000, 0, 3).
				add(stack{"main.holder:48"}, nil, 2000, 10, 2),
			want: []Row{{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.holder"}, Count: 2, Arenas: 2, ArenaBytes: 2000}},
		},
		{
			name:  "a stack the registry cut is matched from its leaf",
			leaks: newBuilder("goroutineleak").add(append(leaked("main.holder:53"), deep(40)...), nil, 1),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(append(stack{"main.holder:48"}, deep(holdStackDepth-1)...), nil, 700, 7, 1),
			want: []Row{{Stack: []string(append(stack{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.holder"}, strings.Split(strings.Repeat("main.f ", 40), " ")[:40]...)), Count: 1, Arenas: 1, ArenaBytes: 700}},
		},
		{
			name: "a site on several leaked stacks is charged once, to the most goroutines",
			leaks: newBuilder("goroutineleak").
				add(leaked("main.holder:53"), nil, 1).
				add(leaked("main.holder:57"), nil, 3).
				add(stack{"runtime.gopark:1", "runtime.selectgo:9", "main.holder:60"}, nil, 2),
			arenas: newBuilder("reserved_space", "used_space", "arenas").
				add(stack{"main.holder:48"}, nil, 4000, 10, 4),
			want: []Row{
				{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.holder"}, Count: 4, Arenas: 4, ArenaBytes: 4000},
				{Stack: []string{"runtime.gopark", "runtime.selectgo", "main.holder"}, Count: 2},
			},
		},
		{
			name:  "no live-arenas profile",
			leaks: newBuilder("goroutineleak").add(leaked("main.a:1"), nil, 1).add(leaked("main.b:1"), nil, 2).add(leaked("main.a:1"), nil, 4),
			want: []Row{
				{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.a"}, Count: 5},
				{Stack: []string{"runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "main.b"}, Count: 2},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var arenas *profile.Profile
			if tc.arenas != nil {
				arenas = tc.arenas.p
			}
			got, err := Join(tc.leaks.p, arenas)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tc.want, func(a, b Row) bool {
				return slices.Equal(a.Stack, b.Stack) && a.Count == b.Count && a.Arenas == b.Arenas && a.ArenaBytes == b.ArenaBytes
			}) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestJoinRefuses(t *testing.T) {
	good := newBuilder("goroutineleak").add(leaked("main.a:1"), nil, 1).p
	for _, tc := range []struct {
		name          string
		leaks, arenas *profile.Profile
		want          string
	}{
		{"a heap profile as leaks", newBuilder("alloc_objects", "alloc_space").p, nil, "not a goroutine leak profile (sample types [alloc_objects/count alloc_space/bytes]"},
		{"an arena profile as live arenas", good, newBuilder("alloc_objects", "alloc_space").p, "not a live-arenas profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Join(tc.leaks, tc.arenas); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// serve answers the paths of a service with the given profiles (nil: 404).
func serve(t *testing.T, leaks, arenas *profile.Profile) string {
	mux := http.NewServeMux()
	for path, p := range map[string]*profile.Profile{LeakPath: leaks, ArenasPath: arenas} {
		if p == nil {
			continue
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) { w.Write(buf.Bytes()) })
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRead(t *testing.T) {
	leaks := newBuilder("goroutineleak").add(leaked("main.holder:53"), nil, 2).p
	arenas := newBuilder("reserved_space", "used_space", "arenas").add(stack{"main.holder:48"}, nil, 2000, 10, 2).p
	ctx := context.Background()
	t.Run("both", func(t *testing.T) {
		r, err := Read(ctx, serve(t, leaks, arenas)+"/", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Available || r.Note != "" || len(r.Rows) != 1 || r.Rows[0].ArenaBytes != 2000 {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("no leak profile", func(t *testing.T) {
		r, err := Read(ctx, serve(t, nil, arenas), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Available || len(r.Rows) != 0 || !strings.Contains(r.Note, "GOEXPERIMENT=goroutineleakprofile") || !strings.Contains(r.Note, "Go 1.27") {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("no live arenas", func(t *testing.T) {
		r, err := Read(ctx, serve(t, leaks, nil), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Available || len(r.Rows) != 1 || r.Rows[0].Count != 2 || !strings.Contains(r.Note, "are not known") {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, err := Read(ctx, serve(t, leaks, arenas), Options{Read: pprofread.Options{MaxBytes: 10}})
		if err == nil || !strings.Contains(err.Error(), LeakPath) {
			t.Errorf("got %v, want a refusal naming %s", err, LeakPath)
		}
	})
	for _, bad := range []string{"", "host:6060", "file:///etc", "http://"} {
		t.Run("bad URL "+bad, func(t *testing.T) {
			if _, err := Read(ctx, bad, Options{}); err == nil || !strings.Contains(err.Error(), "no service URL") {
				t.Errorf("got %v", err)
			}
		})
	}
}

// FuzzJoin: any two profiles that parse join without a panic, and the
// rows' goroutines add up to the leak profile's.
func FuzzJoin(f *testing.F) {
	var a, b bytes.Buffer
	newBuilder("goroutineleak").add(leaked("main.holder:53"), nil, 2).p.Write(&a)
	newBuilder("reserved_space", "used_space", "arenas").add(stack{"main.holder:48"}, nil, 2000, 10, 2).p.Write(&b)
	f.Add(a.Bytes(), b.Bytes())
	f.Fuzz(func(t *testing.T, leakData, arenaData []byte) {
		leaks, _, err := pprofread.Read(bytes.NewReader(leakData), pprofread.Options{})
		if err != nil {
			return
		}
		arenas, _, err := pprofread.Read(bytes.NewReader(arenaData), pprofread.Options{})
		if err != nil {
			arenas = nil
		}
		rows, err := Join(leaks, arenas)
		if err != nil {
			return
		}
		var want, got int64
		for _, s := range leaks.Sample {
			want += s.Value[0]
		}
		for _, r := range rows {
			got += r.Count
		}
		if got != want {
			t.Errorf("rows count %d goroutines, the profile %d", got, want)
		}
	})
}

// TestCount: the leak profile's total, a service without it (not
// available, no error), and a profile of another kind refused.
func TestCount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		leaks     *profile.Profile
		n         int64
		available bool
		err       string
	}{
		{"two stacks", newBuilder("goroutineleak").add(leaked("main.holder:53"), nil, 2).add(leaked("main.waiter:9"), nil, 5).p, 7, true, ""},
		{"none leaked", newBuilder("goroutineleak").p, 0, true, ""},
		{"no profile", nil, 0, false, ""},
		{"not a leak profile", newBuilder("alloc_space").add(leaked("main.x:1"), nil, 5).p, 0, false, "not a goroutine leak profile"},
		{"negative", newBuilder("goroutineleak").add(leaked("main.x:1"), nil, -5).p, 0, false, "a sample of [-5] goroutines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, ok, err := Count(ctx, serve(t, tc.leaks, nil), Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %d, %v, %v; want an error with %q", n, ok, err, tc.err)
				}
				return
			}
			if err != nil || n != tc.n || ok != tc.available {
				t.Errorf("got %d, %v, %v; want %d, %v", n, ok, err, tc.n, tc.available)
			}
		})
	}
	if _, _, err := Count(ctx, "host:6060", Options{}); err == nil || !strings.Contains(err.Error(), "no service URL") {
		t.Errorf("bad URL: %v", err)
	}
}

// FuzzTotal: any profile that parses is refused or totalled to a count
// of 0 or more, the sum of its samples.
func FuzzTotal(f *testing.F) {
	var a bytes.Buffer
	newBuilder("goroutineleak").add(leaked("main.holder:53"), nil, 2).add(leaked("main.waiter:9"), nil, 5).p.Write(&a)
	f.Add(a.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := pprofread.Read(bytes.NewReader(data), pprofread.Options{})
		if err != nil {
			return
		}
		n, err := Total(p)
		if err != nil {
			return
		}
		var want int64
		for _, s := range p.Sample {
			want += s.Value[0]
		}
		if n < 0 || n != want {
			t.Errorf("total %d, samples add up to %d", n, want)
		}
	})
}
