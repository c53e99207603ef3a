// Package goleak reads a service's leaked goroutines (the runtime's
// goroutineleak profile, Go 1.27 on) by stack, and joins them with the
// live-arenas profile: the arenas that leaked goroutines took and never
// gave back, in exact bytes.
//
// There are no goroutine IDs to join on (the runtime keeps them to
// itself), so the join is by stack. The registry of live arenas keeps the
// stack of the call that made or took each arena (the caller of
// arena.NewArena or Pool.Get, up to the goroutine's root), and a goroutine
// blocked inside that caller, or below it, still has those frames on its
// stack: the same functions at the same call lines from the root down to
// the caller, which is the leaf of the arena's stack and may now be at
// another line. An arena's stack found so at the root of a leaked
// goroutine's stack is charged to that goroutine's row. docs/goroutine-leaks.md
// states what this cannot tell apart.
package goleak

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/internal/redact"
)

// The paths read below a service's base URL.
const (
	LeakPath   = "/debug/pprof/goroutineleak"
	ArenasPath = "/debug/arenaprof/arenas"
)

// holdStackDepth is the registry's bound on an arena's stack (arena's
// holdStackDepth): a stack that long may have lost its root part.
const holdStackDepth = 32

// HowToEnable says how a service gets the goroutine leak profile.
const HowToEnable = "the goroutine leak profile needs Go 1.27 or later, or Go 1.26 built with GOEXPERIMENT=goroutineleakprofile, and arenaprof.Start with a Config.Mux (which mounts " + LeakPath + " where the runtime has the profile)"

// Row is the leaked goroutines of one stack.
type Row struct {
	// Stack is the goroutines' stack, leaf first, as function names.
	Stack []string
	// Count is the number of leaked goroutines with this stack.
	Count int64
	// Arenas and ArenaBytes are the live arenas (not idle in a pool)
	// whose making or taking stack is at the root of Stack, and the bytes
	// their chunks and large buffers hold (reserved_space): exact counts
	// from the registry of live arenas.
	Arenas, ArenaBytes int64
}

// Result is a read of one service.
type Result struct {
	// Available is whether the service serves the goroutine leak
	// profile; when not, Note says why and how to turn it on.
	Available bool
	// Rows are the leaked goroutines by stack, most goroutines first
	// (ties by stack).
	Rows []Row
	// Note says what the read could not do, or "" when it did all.
	Note string
}

// Options bound a read.
type Options struct {
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Read bounds each profile read.
	Read pprofread.Options
}

// Read reads the leaked goroutines of the service at base (its base URL,
// e.g. http://host:6060) and the live arenas they hold. The leak profile
// runs a garbage collection cycle in the service (that is how the runtime
// finds leaked goroutines). A service that does not serve the profile
// (404) gives a Result that is not Available, and no error.
func Read(ctx context.Context, base string, o Options) (*Result, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("goroutine leaks: %q is no service URL: want http://host:port", shown(base))
	}
	base = strings.TrimSuffix(u.String(), "/")
	c := o.Client
	if c == nil {
		c = http.DefaultClient
	}
	leak, err := get(ctx, c, base+LeakPath, o.Read)
	if errors.Is(err, errNotFound) {
		return &Result{Note: fmt.Sprintf("%s serves no %s: %s", shown(base), LeakPath, HowToEnable)}, nil
	}
	if err != nil {
		return nil, err
	}
	arenas, err := get(ctx, c, base+ArenasPath, o.Read)
	var note string
	if errors.Is(err, errNotFound) {
		note = fmt.Sprintf("%s serves no %s (arenaprof.Start with a Config.Mux mounts it): the arenas leaked goroutines hold are not known", shown(base), ArenasPath)
		arenas, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := Join(leak, arenas)
	if err != nil {
		return nil, err
	}
	return &Result{Available: true, Rows: rows, Note: note}, nil
}

var errNotFound = errors.New("not found")

// shown returns the URL u as a note or an error may print it: its
// credentials redacted (see redact.URL).
func shown(u string) string { return redact.URL(u, "xxxxx") }

// get reads the profile at u.
func get(ctx context.Context, c *http.Client, u string, o pprofread.Options) (*profile.Profile, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("goroutine leaks: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("goroutine leaks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, errNotFound
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("goroutine leaks: GET %s: %s: %s", shown(u), resp.Status, strings.TrimSpace(string(msg)))
	}
	p, _, err := pprofread.Read(resp.Body, o)
	if err != nil {
		return nil, fmt.Errorf("goroutine leaks: GET %s: %w", shown(u), err)
	}
	return p, nil
}

// frame is one function of a stack, inlined calls expanded.
type frame struct {
	fn   string
	line int64
}

// framesOf returns s's stack, leaf first.
func framesOf(s *profile.Sample) []frame {
	var fs []frame
	for _, loc := range s.Location {
		for _, l := range loc.Line { // innermost first
			name := "?"
			if l.Function != nil {
				name = l.Function.Name
			}
			fs = append(fs, frame{name, l.Line})
		}
	}
	return fs
}

// onStack reports whether the arena stack a (leaf first) is at the root of
// the goroutine stack g: a's leaf function on g with, from there to g's
// root, the same functions at the same lines as a's. A stack of the
// registry's full depth may have lost its root, and is matched from its
// leaf up only.
func onStack(a, g []frame) bool {
	if len(a) == 0 {
		return false
	}
	for i := range g {
		if g[i].fn != a[0].fn || len(g)-i < len(a) {
			continue
		}
		if len(a) < holdStackDepth && len(g)-i != len(a) {
			continue
		}
		if slices.Equal(a[1:], g[i+1:i+len(a)]) {
			return true
		}
	}
	return false
}

// Join groups the leak profile's goroutines by stack (function names, leaf
// first) and charges each live arena site of the live-arenas profile
// (nil: none) to the first row (most goroutines first) one of whose
// goroutines' stacks it is at the root of: a site on several leaked stacks
// is counted once.
func Join(leak, arenas *profile.Profile) ([]Row, error) {
	if len(leak.SampleType) != 1 || leak.SampleType[0].Type != "goroutineleak" && leak.SampleType[0].Type != "goroutine" {
		return nil, fmt.Errorf("goroutine leaks: %s is not a goroutine leak profile (sample types %s; want goroutineleak/count)", LeakPath, typesOf(leak))
	}
	type group struct {
		row    Row
		stacks [][]frame // the goroutines' stacks, with lines
	}
	byKey := map[string]*group{}
	var groups []*group
	for _, s := range leak.Sample {
		fs := framesOf(s)
		names := make([]string, len(fs))
		for i, f := range fs {
			names[i] = f.fn
		}
		key := strings.Join(names, "\x00")
		g := byKey[key]
		if g == nil {
			g = &group{row: Row{Stack: names}}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.row.Count += s.Value[0]
		g.stacks = append(g.stacks, fs)
	}
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.row.Count, a.row.Count), slices.Compare(a.row.Stack, b.row.Stack))
	})
	if arenas != nil {
		reserved, count := -1, -1
		for i, st := range arenas.SampleType {
			switch st.Type {
			case "reserved_space":
				reserved = i
			case "arenas":
				count = i
			}
		}
		if reserved < 0 || count < 0 {
			return nil, fmt.Errorf("goroutine leaks: %s is not a live-arenas profile (sample types %s; want arenas and reserved_space)", ArenasPath, typesOf(arenas))
		}
	site:
		for _, s := range arenas.Sample {
			if slices.Contains(s.Label["pool_idle"], "true") {
				continue
			}
			fs := framesOf(s)
			for _, g := range groups {
				for _, gs := range g.stacks {
					if onStack(fs, gs) {
						g.row.Arenas += s.Value[count]
						g.row.ArenaBytes += s.Value[reserved]
						continue site
					}
				}
			}
		}
	}
	rows := make([]Row, len(groups))
	for i, g := range groups {
		rows[i] = g.row
	}
	return rows, nil
}

// typesOf lists p's sample types as type/unit.
func typesOf(p *profile.Profile) string {
	var ts []string
	for _, st := range p.SampleType {
		ts = append(ts, st.Type+"/"+st.Unit)
	}
	return "[" + strings.Join(ts, " ") + "]"
}

// Count reads the number of leaked goroutines of the service at base (its
// base URL): the total of its goroutine leak profile, without the
// arenas. Like Read, it runs one leak-finding garbage collection in the
// service. available is false (and n 0, err nil) when the service serves
// no goroutine leak profile.
func Count(ctx context.Context, base string, o Options) (n int64, available bool, err error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, false, fmt.Errorf("goroutine leaks: %q is no service URL: want http://host:port", shown(base))
	}
	c := o.Client
	if c == nil {
		c = http.DefaultClient
	}
	leak, err := get(ctx, c, strings.TrimSuffix(u.String(), "/")+LeakPath, o.Read)
	if errors.Is(err, errNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, err = Total(leak)
	return n, err == nil, err
}

// Total is the number of goroutines a goroutine leak profile counts.
func Total(leak *profile.Profile) (int64, error) {
	if len(leak.SampleType) != 1 || leak.SampleType[0].Type != "goroutineleak" && leak.SampleType[0].Type != "goroutine" {
		return 0, fmt.Errorf("goroutine leaks: %s is not a goroutine leak profile (sample types %s; want goroutineleak/count)", LeakPath, typesOf(leak))
	}
	var n int64
	for _, s := range leak.Sample {
		if len(s.Value) != 1 || s.Value[0] < 0 || s.Value[0] > math.MaxInt64-n {
			return 0, fmt.Errorf("goroutine leaks: %s holds a sample of %v goroutines (after %d)", LeakPath, s.Value, n)
		}
		n += s.Value[0]
	}
	return n, nil
}
