package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/goheap"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
	"github.com/arenaprof/arenaprof/report"
)

// checkGrouping refuses to group an unsymbolized profile (a legacy text
// heap profile, or one of raw addresses) by function or stack: its rows
// would be raw addresses. The error names go tool pprof -proto as the fix.
func checkGrouping(src string, p *profile.Profile, by string) error {
	if by != "func" && by != "stack" {
		return nil
	}
	if err := pprofmt.CheckSymbolized(p); err != nil {
		return topInputErr("%s: %s", src, strings.TrimPrefix(err.Error(), "report: "))
	}
	return nil
}

// holdsGoHeap reports whether p holds Go heap memory: a heap or allocs
// profile of the runtime, or an arenaprof profile with Go heap samples (a
// combined memory profile, or a heap upload of the agent). Go heap samples
// record no types, so such a profile is grouped by function by default.
func holdsGoHeap(f *pprofmt.Facts) bool {
	return (f.Kind == pprofmt.KindGoHeap && f.Period > 0) || f.HeapSamples
}

// Several inputs per side: top and diff merge the profiles of a list of
// files, a directory or a glob into one, as go tool pprof merges the
// profiles it is given.

// mergedInputs describes the profiles merged into one side.
type mergedInputs struct {
	n        int       // profiles merged
	from, to time.Time // the span their times cover; zero if none has a time
	skipped  []string  // what a directory or glob held that was not read (skips.list), e.g. "12 cpu profiles"
}

// memoryKinds are the profiles of Config.Dir a directory input reads: the
// arena and Go heap uploads, which hold sampled memory over disjoint
// windows and add up. The others (cpu, wall, and peak and arenas, which
// are states of one moment) are skipped.
var memoryKinds = map[string]bool{"arena": true, "heap": true}

// dirTimeLayout is the time that starts the names of Config.Dir's files.
const dirTimeLayout = "20060102T150405.000Z"

// dirFileKind returns the profile name of a file Config.Dir writes
// (TIME-APP[-LABELS]-PROFILE[-N].pb.gz), and whether name is one.
func dirFileKind(name string) (string, bool) {
	rest, ok := strings.CutSuffix(name, ".pb.gz")
	if !ok || len(rest) <= len(dirTimeLayout) || rest[len(dirTimeLayout)] != '-' {
		return "", false
	}
	if _, err := time.Parse(dirTimeLayout, rest[:len(dirTimeLayout)]); err != nil {
		return "", false
	}
	parts := strings.Split(rest[len(dirTimeLayout)+1:], "-")
	kind := parts[len(parts)-1]
	if len(parts) > 2 && strings.Trim(kind, "0123456789") == "" {
		kind = parts[len(parts)-2] // -N: a second file of the same millisecond
	}
	return kind, len(parts) >= 2
}

// maxNamedSkips bounds the entries a side's heading names as not read;
// the others are counted.
const maxNamedSkips = 10

// skips collects what the inputs of a side held that was not read: the
// files of Config.Dir's other profiles, counted by profile name; hidden
// files (the agent's temporary files among them), counted; and every
// other entry, named with the reason.
type skips struct {
	kinds  map[string]int // Config.Dir's other profiles: cpu, wall, peak, arenas
	hidden int
	named  []string // "path (reason)"
}

// name records path as not read, for reason.
func (k *skips) name(path, reason string) { k.named = append(k.named, path+" ("+reason+")") }

// list is what the heading and -json say: the counts, then the entries
// named, at most maxNamedSkips, and how many more there were.
func (k *skips) list() []string {
	var out []string
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	for _, kind := range slices.Sorted(maps.Keys(k.kinds)) {
		out = append(out, plural(k.kinds[kind], kind+" profile", kind+" profiles"))
	}
	if k.hidden > 0 {
		out = append(out, plural(k.hidden, "hidden file", "hidden files"))
	}
	named := k.named
	if len(named) > maxNamedSkips {
		named = named[:maxNamedSkips]
	}
	out = append(out, named...)
	if more := len(k.named) - len(named); more > 0 {
		out = append(out, plural(more, "more entry", "more entries")+" not read")
	}
	return out
}

// regularFile resolves the entry e of dir: its path and whether it is a
// regular file to read, following a symbolic link; for an entry that is
// not one, the reason, for skips.
func regularFile(dir string, e fs.DirEntry) (path string, ok bool, reason string) {
	path = filepath.Join(dir, e.Name())
	t := e.Type()
	switch {
	case t.IsRegular():
		return path, true, ""
	case t.IsDir():
		return path, false, "a directory: directories are not read inside one"
	case t&fs.ModeSymlink == 0:
		return path, false, "not a regular file"
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return path, false, "a symbolic link loop"
	case errors.Is(err, fs.ErrNotExist):
		return path, false, "a broken symbolic link"
	case err != nil:
		return path, false, "unreadable: " + strings.TrimPrefix(err.Error(), "stat "+path+": ")
	case fi.IsDir():
		return path, false, "a symbolic link to a directory"
	case !fi.Mode().IsRegular():
		return path, false, "a symbolic link to something other than a regular file"
	}
	// A link to a file of the same directory would count it twice.
	if target, err := filepath.EvalSymlinks(path); err == nil {
		if abs, err := filepath.Abs(dir); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil && filepath.Dir(target) == real {
				return path, false, "a symbolic link to " + filepath.Base(target) + " of the same directory, read once"
			}
		}
	}
	return path, true, ""
}

// readProfileDir lists the profiles of dir to merge: the arena and heap
// profiles Config.Dir writes, in time order, skipping its other profiles,
// its temporary files and hidden files; a directory holding no file of
// Config.Dir's gives each of its .pb.gz and .pb files, in name order.
// Symbolic links to files are followed. What it does not read is added
// to k.
func readProfileDir(dir string, k *skips) (files []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, topInputErr("cannot read the directory %s: %v", dir, err)
	}
	var agent, plain, others []string
	var mine skips
	mine.kinds = map[string]int{}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			mine.hidden++ // temporary files of Config.Dir start with a dot
			continue
		}
		path, ok, reason := regularFile(dir, e)
		if !ok {
			mine.name(path, reason)
			continue
		}
		if kind, ok := dirFileKind(name); ok {
			if memoryKinds[kind] {
				agent = append(agent, path)
			} else {
				mine.kinds[kind]++
			}
			continue
		}
		if strings.HasSuffix(name, ".pb.gz") || strings.HasSuffix(name, ".pb") {
			plain = append(plain, path)
		} else {
			others = append(others, path)
		}
	}
	switch {
	case len(agent) > 0:
		for _, f := range plain {
			mine.name(f, "not named as Config.Dir names its files, beside files of Config.Dir")
		}
		files = agent // names start with the time: sorted by it
	case len(mine.kinds) > 0:
		return nil, topInputErr("%s holds no arena or heap profile of Config.Dir (it holds %s: cpu and wall hold no memory, and peak and arenas profiles are states of one moment, which do not add up); give one such file to read it alone", dir, strings.Join(mine.list()[:len(mine.kinds)], ", "))
	case len(plain) > 0:
		files = plain
	default:
		return nil, topInputErr("%s holds no profile: no file of Config.Dir and no .pb.gz or .pb file", dir)
	}
	for _, f := range others {
		mine.name(f, "not a profile by its name: no .pb.gz or .pb")
	}
	if k.kinds == nil {
		k.kinds = map[string]int{}
	}
	for kind, n := range mine.kinds {
		k.kinds[kind] += n
	}
	k.hidden += mine.hidden
	k.named = append(k.named, mine.named...)
	return files, nil
}

// expandInputs turns the arguments of one side into the profiles to read:
// a directory gives its profiles (readProfileDir), a pattern that names no
// file is expanded as a glob (filepath.Match's syntax: quote it so that
// the shell leaves it alone; a match that is no regular file (a
// directory, a FIFO, a socket, a device), or that cannot be
// read, is skipped and named), anything else (a file, an http(s) URL, or
// - for standard input) is read as it is. skipped lists what a directory
// or a glob held that was not read (skips.list); single reports one
// argument read as it is: no merge.
func expandInputs(args []string) (files, skipped []string, single bool, err error) {
	var k skips
	for _, a := range args {
		if isProfileURL(a) || a == "-" {
			files = append(files, a)
			continue
		}
		fi, statErr := os.Stat(a)
		switch {
		case statErr == nil && fi.IsDir():
			got, err := readProfileDir(a, &k)
			if err != nil {
				return nil, nil, false, err
			}
			files = append(files, got...)
		case statErr != nil && strings.ContainsAny(a, "*?["):
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, nil, false, topUsageErr("bad pattern %q: %v", a, err)
			}
			n := len(files)
			for _, f := range m {
				fi, err := os.Stat(f)
				switch {
				case errors.Is(err, syscall.ELOOP):
					k.name(f, "a symbolic link loop")
				case errors.Is(err, fs.ErrNotExist):
					k.name(f, "a broken symbolic link")
				case err != nil:
					k.name(f, "unreadable: "+strings.TrimPrefix(err.Error(), "stat "+f+": "))
				case fi.IsDir():
					k.name(f, "a directory: a glob reads the files it matches")
				case !fi.Mode().IsRegular():
					// A FIFO, a socket or a device: opening a FIFO with
					// no writer blocks for ever.
					k.name(f, "not a regular file")
				default:
					files = append(files, f)
				}
			}
			if len(files) == n {
				if len(k.named) > 0 {
					return nil, nil, false, topInputErr("no file matches %s (it matches %s)", a, strings.Join(k.list(), ", "))
				}
				return nil, nil, false, topInputErr("no file matches %s", a)
			}
		default:
			files = append(files, a)
		}
	}
	seen := map[string]string{}
	for _, f := range files {
		key := f
		if !isProfileURL(f) && f != "-" {
			key = filepath.Clean(f)
		}
		if prev, ok := seen[key]; ok {
			if prev != f {
				f += " (as " + prev + " and " + f + ")"
			}
			return nil, nil, false, topUsageErr("%s is given twice: its samples would count twice", f)
		}
		seen[key] = f
	}
	single = len(args) == 1 && len(files) == 1 && files[0] == args[0]
	return files, k.list(), single, nil
}

// loadInputs reads the profiles of one side (see expandInputs) within lim,
// merged when there are several or when they come from a directory or a
// glob.
func loadInputs(args []string, lim report.ParseOptions) (*arenaProfile, error) {
	files, skipped, single, err := expandInputs(args)
	if err != nil {
		return nil, err
	}
	if single {
		return loadArenaProfile(files[0], lim)
	}
	return loadMerged(files, skipped, lim)
}

// mergePart is what a merge keeps of each profile read: its source, for
// the messages that refuse to merge it with another.
type mergePart struct {
	src  string
	kind string // "arenaprof" (arena, heap or combined uploads), "Go runtime heap", "live-arenas" or "peak"
}

// partKind names the kind of a profile (its facts f) for the merge's
// messages.
func partKind(f *pprofmt.Facts) string {
	switch {
	case f.Kind == pprofmt.KindHoldings:
		return "live-arenas"
	case f.Kind == pprofmt.KindGoHeap:
		return "Go runtime heap"
	case f.Peak:
		return "peak"
	}
	return "arenaprof"
}

// loadMerged reads files within lim and merges them (report.Merge): values
// add up and the window markings join. -max-memory bounds them together by
// what the merged profile keeps (pprofread.Kept), which grows with the
// distinct stacks, types and labels of the inputs, not with their number:
// each profile is read within what the merged profile of those before it
// leaves, that counted twice (it, and the merge that extends it). It
// refuses what the merged profile could not be read as: live-arenas and
// peak profiles (states of one moment, which do not add up), Go runtime
// heap profiles with arenaprof profiles, and Go heap samples of different
// MemProfileRates or of Go releases whose heap samplers differ.
//
// Profiles are merged in batches (mergeBatch): a merge rebuilds the
// merged profile, so merging each input into it alone costs the merged
// profile's size per input.
func loadMerged(files, skipped []string, lim report.ParseOptions) (*arenaProfile, error) {
	lim = withDefaults(lim)
	var (
		m     = merger{lim: lim}
		first mergePart
		rates = map[int64]string{}  // MemProfileRate: the first file with it
		rules = map[string]string{} // Go heap sampler rule: the first file with it
		info  = &mergedInputs{n: len(files), skipped: skipped}
	)
	for i, src := range files {
		if isProfileURL(src) || src == "-" {
			// Read once: the batch must leave it all it may take.
			if err := m.flush(); err != nil {
				return nil, err
			}
		}
		p, shown, err := m.read(src)
		if err != nil {
			var mle *pprofmt.MemoryLimitError
			if errors.As(err, &mle) {
				if len(files) > 1 {
					return nil, mergedLimitErr(files[i+1:], len(files), i, shown, m.kept, mle, lim)
				}
				return nil, limitErr(shown, err, lim)
			}
			return nil, err
		}
		f, err := checkArena(shown, p)
		if err != nil {
			return nil, err
		}
		part := mergePart{src: shown, kind: partKind(f)}
		if (part.kind == "live-arenas" || part.kind == "peak") && len(files) > 1 {
			return nil, topInputErr("%s is a %s profile, a state of one moment: such profiles do not add up; read it alone", part.src, part.kind)
		}
		if i == 0 {
			first = part
		} else if part.kind != first.kind {
			return nil, topInputErr("%s (%s profile) and %s (%s profile) cannot be merged: their sample types differ; merge profiles of one kind, e.g. the arena and heap uploads of Config.Dir, or runtime/pprof heap profiles", first.src, first.kind, part.src, part.kind)
		}
		if err := checkMergeRates(f, part.src, rates, rules); err != nil {
			return nil, err
		}
		addMeanLabels(p, f)
		info.span(p)
		if len(files) == 1 {
			return &arenaProfile{prof: p, facts: f, merged: info}, nil
		}
		if err := m.add(p, part.src); err != nil {
			return nil, err
		}
	}
	if err := m.flush(); err != nil {
		return nil, err
	}
	facts, _ := pprofmt.Describe(m.acc) // each part's means were checked
	return &arenaProfile{prof: m.acc, facts: facts, cost: m.kept, merged: info}, nil
}

// mergeBatch bounds the profiles read before they are merged at once.
const mergeBatch = 256

// merger merges the profiles of one side in batches, within lim: acc is
// the merged profile of the batches so far, which keeps kept bytes
// (pprofread.Kept); pending are the profiles read since, from the inputs
// srcs, which keep pendingKept, of which pendingAdds in records (without
// each profile's fixed cost: pprofread.Adds), what merging them can add
// at most.
type merger struct {
	lim                      report.ParseOptions
	acc                      *profile.Profile
	kept                     int64
	merged                   int // the profiles in acc
	pending                  []*profile.Profile
	pendingKept, pendingAdds int64
	srcs                     []string
}

// budget is what reading the next profile may take: what the merged
// profile and the batch leave, both counted twice (they, and the merge
// that rebuilds them).
func (m *merger) budget() report.ParseOptions {
	b := m.lim
	b.MaxMemory = max(m.lim.MaxMemory-2*m.kept-2*m.pendingKept, 1)
	return b
}

// read reads the profile src within the budget, and returns it and its
// name in messages; when the batch leaves too little, it merges the batch
// and reads src again (a file: a URL and standard input are read with no
// batch pending). Its errors are worded for the command, except a
// *pprofmt.MemoryLimitError, returned wrapped for mergedLimitErr.
func (m *merger) read(src string) (*profile.Profile, string, error) {
	for {
		s, err := openProfileSource(src)
		if err != nil {
			return nil, "", err
		}
		p, _, err := pprofread.Read(s.r, pprofread.Options(m.budget()))
		s.close()
		var mle *pprofmt.MemoryLimitError
		switch {
		case err == nil:
			return p, s.shown, nil
		case !errors.As(err, &mle) || mle.NotProfile:
			return nil, s.shown, parseErr(s, err, m.lim)
		case len(m.pending) == 0:
			return nil, s.shown, err
		}
		if err := m.flush(); err != nil {
			return nil, s.shown, err
		}
	}
}

// add adds p, read from src, to the batch, and merges the batch when it
// holds mergeBatch profiles or records as large as the merged profile (at
// least 1 MiB of them): a merge then costs about what the batch holds.
func (m *merger) add(p *profile.Profile, src string) error {
	k := pprofread.Kept(p)
	m.pending = append(m.pending, p)
	m.pendingKept += k
	m.pendingAdds += pprofread.Adds(k)
	m.srcs = append(m.srcs, src)
	if len(m.pending) >= mergeBatch || m.pendingAdds >= max(m.kept, 1<<20) {
		return m.flush()
	}
	return nil
}

// flush merges the batch into the merged profile.
func (m *merger) flush() error {
	if len(m.pending) == 0 {
		return nil
	}
	parts := m.pending
	if m.acc != nil {
		parts = append([]*profile.Profile{m.acc}, parts...)
	}
	acc, err := report.Merge(parts...)
	if err != nil {
		return topInputErr("cannot merge %s with the %d profiles before it: %s", inputsName(m.srcs), m.merged, strings.TrimPrefix(err.Error(), "report: "))
	}
	m.acc, m.kept, m.merged = acc, pprofread.Kept(acc), m.merged+len(m.pending)
	m.pending, m.pendingKept, m.pendingAdds, m.srcs = nil, 0, 0, nil
	return nil
}

// mergedLimitErr is the message for inputs that pass -max-memory
// together: of n inputs, the profiles before the one at index i, shown as
// src, were merged into one that keeps kept bytes (counted twice), and it
// was refused with mle. It measures what the inputs after it, rest, need,
// reading each through to its end without keeping it (a refusal at a
// bound of 1 byte: see report.Parse), and suggests a bound that reads
// them all: at each input, what the merged profile before it keeps,
// counted twice, plus what it needs to be read, the merged profile taken
// to grow by each input's records (pprofread.Adds), its most.
func mergedLimitErr(rest []string, n, i int, src string, kept int64, mle *pprofmt.MemoryLimitError, lim report.ParseOptions) error {
	grows, exact := kept, mle.Exact
	need := int64(0)
	measured := func(e *pprofmt.MemoryLimitError) {
		need = max(need, 2*grows+e.Need)
		grows += pprofread.Adds(e.Need - 4*e.Size)
	}
	measured(mle)
	for _, f := range rest {
		s, err := openProfileSource(f)
		if err != nil {
			exact = false
			continue
		}
		_, _, err = pprofread.Read(s.r, pprofread.Options{MaxBytes: lim.MaxBytes, MaxMemory: 1})
		s.close()
		var e *pprofmt.MemoryLimitError
		if !errors.As(err, &e) || !e.Exact {
			exact = false
			continue
		}
		measured(e)
	}
	takes := "take " + tabfmt.Bytes(float64(need))
	switch {
	case !exact:
		takes = "take more than " + tabfmt.Bytes(float64(need))
	case len(rest) > 0:
		takes = "take at most " + tabfmt.Bytes(float64(need))
	}
	return topInputErr("cannot read %s: the %d inputs together %s of memory, more than -max-memory %s (the merged profile of the %d read before it keeps %s, counted twice); raise -max-memory (e.g. -max-memory %s) or give fewer inputs",
		src, n, takes, formatByteSize(lim.MaxMemory), i, tabfmt.Bytes(float64(kept)), formatByteSize(suggestMemory(lim.MaxMemory, need)))
}

// checkMergeRates refuses a profile (its facts f), read from src, when its
// Go heap samples were drawn at a MemProfileRate, or under a heap
// sampler's rule, other than those of the profiles merged before it; rates
// and rules map each seen so far to the first file with it.
func checkMergeRates(f *pprofmt.Facts, src string, rates map[int64]string, rules map[string]string) error {
	mine := f.HeapRates
	for _, r := range mine {
		for other, f := range rates {
			if other != r {
				return topInputErr("%s holds Go heap samples drawn at MemProfileRate %d and %s at %d: Go heap samples of different rates cannot be grouped together; merge profiles of one rate", f, other, src, r)
			}
		}
		rates[r] = src
	}
	if len(mine) == 0 {
		return nil
	}
	for _, v := range f.GoVersions {
		rule, err := goheap.RuleOf(v)
		if err != nil {
			continue // report.Table names the comment
		}
		name := rule.String()
		for other, f := range rules {
			if other != name {
				return topInputErr("%s and %s hold Go heap samples of Go releases whose heap samplers differ (the %s and %s rules): read them apart", f, src, other, name)
			}
		}
		rules[name] = src
	}
	return nil
}

// addMeanLabels gives each arena sample of p (whose facts are f) without a
// sampling_mean label one holding p's period, the mean it was drawn under:
// the merged profile keeps one period, the largest of its parts'.
func addMeanLabels(p *profile.Profile, f *pprofmt.Facts) {
	if f.Kind == pprofmt.KindGoHeap {
		return
	}
	for _, s := range p.Sample {
		if v := s.Label[pprofmt.LabelMemory]; len(v) > 0 && v[0] == pprofmt.MemoryHeap {
			continue
		}
		if len(s.NumLabel[pprofmt.LabelMean]) > 0 {
			continue
		}
		if s.NumLabel == nil {
			s.NumLabel = map[string][]int64{}
		}
		if s.NumUnit == nil {
			s.NumUnit = map[string][]string{}
		}
		s.NumLabel[pprofmt.LabelMean] = []int64{p.Period}
		s.NumUnit[pprofmt.LabelMean] = []string{"bytes"}
	}
}

// span extends the time span of m by p's: from its time to its end.
func (m *mergedInputs) span(p *profile.Profile) {
	if p.TimeNanos <= 0 {
		return
	}
	from, to := time.Unix(0, p.TimeNanos).UTC(), time.Unix(0, p.TimeNanos+max(p.DurationNanos, 0)).UTC()
	if m.from.IsZero() || from.Before(m.from) {
		m.from = from
	}
	if to.After(m.to) {
		m.to = to
	}
}

// describe is the heading line of a side of merged profiles, e.g.
// "12 profiles merged, 2026-11-25 19:00:00 to 20:00:00 UTC (1h0m0s)".
func (m *mergedInputs) describe() string {
	s := fmt.Sprintf("%d profiles merged", m.n)
	if m.n == 1 {
		s = "1 profile"
	}
	if !m.from.IsZero() {
		end := m.to.Format("2006-01-02 15:04:05")
		if m.to.Format("20060102") == m.from.Format("20060102") {
			end = m.to.Format("15:04:05")
		}
		d := m.to.Sub(m.from)
		if d >= time.Minute {
			d = d.Round(time.Second)
		} else {
			d = d.Round(time.Millisecond)
		}
		s += fmt.Sprintf(", %s to %s UTC (%v)", m.from.Format("2006-01-02 15:04:05"), end, d)
	}
	if len(m.skipped) > 0 {
		s += "; skipped: " + strings.Join(m.skipped, ", ")
	}
	return s
}
