package pprofenc

import (
	"errors"
	"hash/maphash"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/klauspost/compress/gzip"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/wire"
)

// HeapDelta writes the Go runtime's heap profile one interval at a time,
// in arenaprof's format (what internal/goheap.Convert makes of
// runtime/pprof's heap profile, and the agent's delta of two of them):
// the six sample types, alloc_objects and alloc_space over the interval
// scaled as runtime/pprof scales them, inuse_objects and inuse_space
// absolute, the raw number of sampled objects allocated in the interval in
// alloc_samples, alloc_tail 0; on every sample the string label
// memory=heap and the numeric labels bytes (the object size) and
// memprofilerate; the comment "arenaprof go=VERSION".
//
// runtime/pprof's heap profile writer allocates about 1.3 MiB per call (a
// new gzip writer, a new table of every location), and reading its output
// back to subtract two profiles costs several times that. HeapDelta reads
// runtime.MemProfile into records it keeps, keeps the cumulative counts of
// each bucket between reads in one map, and symbolizes each program
// counter once, for the life of the writer (grafana/pyroscope-go's
// godeltaprof works this way too). A HeapDelta must not be used by two
// goroutines at once.
type HeapDelta struct {
	records []runtime.MemProfileRecord
	// prev holds each bucket's cumulative counts at the last Read.
	prev map[bucketKey]bucketCounts
	// samples are the buckets of the last Read with a value to write.
	samples []heapSample
	rate    int64
	start   time.Time // of the interval of the last Read
	end     time.Time

	// Symbols, kept between reads: a location per program counter, a
	// function per name and file, each with its id.
	locs  map[uintptr]*heapLoc
	funcs map[funcKey]*heapFunc
	mark  uint64 // the current write: locations and functions used carry it
	used  []*heapLoc
	fused []*heapFunc

	numStr map[int64]string // decimal forms of sizes and rates

	exe string
	gz  *gzip.Writer
	e   *encoder // its output buffer, string table and scratch buffers
}

type bucketKey struct {
	stack uint64 // a hash of the stack
	size  int64
}

type bucketCounts struct{ allocObjects, allocBytes int64 }

// heapSample is one bucket to write: its record and values.
type heapSample struct {
	rec    int // index in records
	size   int64
	values [pprofmt.NumSampleTypes]int64
}

type heapLoc struct {
	id      uint64
	pc      uintptr
	runtime bool // in package runtime: hidden at the top of a stack
	lines   []heapLine
	mark    uint64
}

type heapLine struct {
	fn   *heapFunc
	line int64
}

type funcKey struct{ name, file string }

type heapFunc struct {
	id         uint64
	name, file string
	mark       uint64
}

var stackSeed = maphash.MakeSeed()

// NewHeapDelta returns a HeapDelta. Its first Read gives the profile
// since the program started (as runtime/pprof writes it, a window of no
// length); each later one, the interval since the previous Read.
func NewHeapDelta() *HeapDelta {
	exe, _ := os.Executable()
	return &HeapDelta{
		prev:   map[bucketKey]bucketCounts{},
		locs:   map[uintptr]*heapLoc{},
		funcs:  map[funcKey]*heapFunc{},
		numStr: map[int64]string{},
		exe:    exe,
		e:      newEncoder(),
	}
}

// memProfile reads the runtime's records; tests replace it.
var memProfile = runtime.MemProfile

// Read ends the interval at now: it reads the runtime's heap profile and
// keeps, for Write, each bucket's allocations since the previous Read and
// its objects in use. A nil records reads the runtime's profile; tests
// pass their own.
func (h *HeapDelta) Read(records []runtime.MemProfileRecord) error {
	now := time.Now()
	h.rate = int64(runtime.MemProfileRate)
	if h.rate <= 0 {
		return errors.New("runtime.MemProfileRate is 0: the Go heap is not sampled")
	}
	if records == nil {
		for {
			n, ok := memProfile(h.records[:cap(h.records)], true)
			if ok {
				h.records = h.records[:n]
				break
			}
			h.records = make([]runtime.MemProfileRecord, n+n/4+64)
		}
	} else {
		h.records = records
	}
	h.start, h.end = h.end, now
	if h.start.IsZero() {
		h.start = now
	}
	h.samples = h.samples[:0]
	for i := range h.records {
		r := &h.records[i]
		var size int64
		if r.AllocObjects > 0 {
			size = r.AllocBytes / r.AllocObjects
		}
		stk := r.Stack()
		k := bucketKey{size: size}
		if len(stk) > 0 {
			k.stack = maphash.Bytes(stackSeed, unsafe.Slice((*byte)(unsafe.Pointer(&stk[0])), len(stk)*int(unsafe.Sizeof(stk[0]))))
		}
		p := h.prev[k]
		h.prev[k] = bucketCounts{r.AllocObjects, r.AllocBytes}
		// A bucket's counts only grow; smaller ones (two stacks of one
		// hash, 2^-64 likely) are counted from zero.
		dObj, dBytes := r.AllocObjects-p.allocObjects, r.AllocBytes-p.allocBytes
		if dObj < 0 || dBytes < 0 {
			dObj, dBytes = r.AllocObjects, r.AllocBytes
		}
		ao, ab := scaleHeapSample(dObj, dBytes, h.rate)
		uo, ub := scaleHeapSample(r.InUseObjects(), r.InUseBytes(), h.rate)
		if ao == 0 && ab == 0 && uo == 0 && ub == 0 && dObj == 0 {
			continue
		}
		h.samples = append(h.samples, heapSample{rec: i, size: size, values: [pprofmt.NumSampleTypes]int64{
			pprofmt.IndexAllocObjects: ao,
			pprofmt.IndexAllocSpace:   ab,
			pprofmt.IndexInuseObjects: uo,
			pprofmt.IndexInuseSpace:   ub,
			pprofmt.IndexAllocSamples: dObj,
		}})
	}
	return nil
}

// Samples returns the number of samples the last Read keeps for Write.
func (h *HeapDelta) Samples() int { return len(h.samples) }

// scaleHeapSample is runtime/pprof's (protomem.go): the counts a sampled
// count of objects of total size stands for, at MemProfileRate rate.
func scaleHeapSample(count, size, rate int64) (int64, int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, size
	}
	avgSize := float64(size) / float64(count)
	scale := 1 / (1 - math.Exp(-avgSize/float64(rate)))
	return int64(float64(count) * scale), int64(float64(size) * scale)
}

// Start returns the start of the interval of the last Read, the
// profile's TimeNanos.
func (h *HeapDelta) Start() time.Time { return h.start }

// SetStart moves the start of the interval of the last Read to t
// nanoseconds since the epoch (the agent keeps one source's profiles in
// distinct milliseconds); the interval still ends where it ended.
func (h *HeapDelta) SetStart(t int64) { h.start = time.Unix(0, t) }

// WriteGzip writes the interval of the last Read to w, gzipped (see
// newGzip), with opts' additions (nil: none; Options.TypeFrames
// adds nothing to Go heap samples).
func (h *HeapDelta) WriteGzip(w io.Writer, opts *Options) error {
	if h.gz == nil {
		h.gz = newGzip(w)
	} else {
		h.gz.Reset(w)
	}
	defer h.gz.Reset(nil)
	if err := h.Write(h.gz, opts); err != nil {
		return err
	}
	return h.gz.Close()
}

// Write writes the interval of the last Read to w as an uncompressed
// protocol buffer (see WriteGzip).
func (h *HeapDelta) Write(w io.Writer, opts *Options) error {
	e := h.e
	defer e.reset()
	e.w.Reset(w)
	e.strings[""] = 0
	e.table = append(e.table, "")
	if opts != nil {
		e.opts = *opts
	}
	h.mark++
	h.used, h.fused = h.used[:0], h.fused[:0]

	for _, st := range pprofmt.SampleTypes() {
		e.valueType(1, st)
	}
	// The labels every sample shares, then each sample's size.
	memKey, heapVal := e.str(pprofmt.LabelMemory), e.str(pprofmt.MemoryHeap)
	rateKey, bytesKey, bytesUnit := e.str(pprofmt.LabelHeapRate), e.str(pprofmt.LabelBytes), e.str("bytes")
	rateStr := slices.Contains(e.opts.NumAsString, pprofmt.LabelHeapRate)
	sizeStr := slices.Contains(e.opts.NumAsString, pprofmt.LabelBytes) || slices.Contains(e.opts.HeapNumAsString, pprofmt.LabelBytes)
	var rateStrIdx int64
	if rateStr {
		rateStrIdx = e.str(h.decimal(h.rate))
	}
	for i := range h.samples {
		s := &h.samples[i]
		e.ids = h.appendLocs(e.ids[:0], h.records[s.rec].Stack())
		b := appendUint64s(e.buf[:0], 1, e.ids)
		b = appendInt64sPacked(b, 2, s.values[:])
		b = appendLabel(b, memKey, heapVal, 0, 0)
		b = appendLabel(b, rateKey, 0, h.rate, bytesUnit)
		if rateStr {
			b = appendLabel(b, rateKey, rateStrIdx, 0, 0)
		}
		if s.size != 0 {
			b = appendLabel(b, bytesKey, 0, s.size, bytesUnit)
			if sizeStr {
				b = appendLabel(b, bytesKey, e.str(h.decimal(s.size)), 0, 0)
			}
		}
		e.message(2, b)
	}
	// One mapping, the executable, as export.Build writes it.
	b := wire.AppendUintOpt(e.buf[:0], 1, 1)
	b = wire.AppendUintOpt(b, 5, uint64(e.str(h.exe)))
	for _, f := range []int{7, 8, 9, 10} {
		b = appendBoolOpt(b, f, true)
	}
	e.message(3, b)
	for _, l := range h.used {
		b := wire.AppendUintOpt(e.buf[:0], 1, l.id)
		b = wire.AppendUintOpt(b, 2, 1)
		b = wire.AppendUintOpt(b, 3, uint64(l.pc))
		for _, ln := range l.lines {
			n := wire.UintOptSize(1, ln.fn.id) + wire.UintOptSize(2, uint64(ln.line))
			b = wire.AppendVarint(b, 4<<3|2)
			b = wire.AppendVarint(b, uint64(n))
			b = wire.AppendUintOpt(b, 1, ln.fn.id)
			b = wire.AppendUintOpt(b, 2, uint64(ln.line))
		}
		e.message(4, b)
	}
	for _, f := range h.fused {
		e.function(f.id, f.name, f.name, f.file, 0)
	}
	ptType, ptUnit := e.str("space"), e.str("bytes")
	comment := e.str(pprofmt.GoVersionComment(runtime.Version()))
	defType := e.str("alloc_space")
	e.writeStringTable()
	b = wire.AppendUintOpt(e.buf[:0], 9, uint64(h.start.UnixNano()))
	b = wire.AppendUintOpt(b, 10, uint64(max(h.end.Sub(h.start), 0)))
	e.buf = b
	e.write(b)
	b = wire.AppendUintOpt(e.buf[:0], 1, uint64(ptType))
	b = wire.AppendUintOpt(b, 2, uint64(ptUnit))
	e.message(11, b)
	b = wire.AppendUintOpt(e.buf[:0], 12, uint64(h.rate))
	b = wire.AppendUintOpt(b, 13, uint64(comment))
	b = wire.AppendUintOpt(b, 14, uint64(defType))
	e.buf = b
	e.write(b)
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// decimal returns the decimal form of v, made once: sizes and rates are
// few.
func (h *HeapDelta) decimal(v int64) string {
	s, ok := h.numStr[v]
	if !ok {
		s = strconv.FormatInt(v, 10)
		if len(h.numStr) < 1<<12 {
			h.numStr[v] = s
		}
	}
	return s
}

// appendLabel appends a Label message: a string label (str) or a numeric
// one (num, unit).
func appendLabel(b []byte, key, str, num, unit int64) []byte {
	n := wire.UintOptSize(1, uint64(key)) + wire.UintOptSize(2, uint64(str)) + wire.UintOptSize(3, uint64(num)) + wire.UintOptSize(4, uint64(unit))
	b = wire.AppendVarint(b, 3<<3|2)
	b = wire.AppendVarint(b, uint64(n))
	b = wire.AppendUintOpt(b, 1, uint64(key))
	b = wire.AppendUintOpt(b, 2, uint64(str))
	b = wire.AppendUintOpt(b, 3, uint64(num))
	return wire.AppendUintOpt(b, 4, uint64(unit))
}

// appendLocs appends the location ids of stk, its runtime frames at the
// top hidden as runtime/pprof hides them (all kept when nothing else is
// left), and marks the locations and functions used.
func (h *HeapDelta) appendLocs(ids []uint64, stk []uintptr) []uint64 {
	first := 0
	for first < len(stk) && h.loc(stk[first]).runtime {
		first++
	}
	if first == len(stk) {
		first = 0
	}
	for _, pc := range stk[first:] {
		l := h.loc(pc)
		if len(l.lines) == 0 {
			continue
		}
		if l.mark != h.mark {
			l.mark = h.mark
			h.used = append(h.used, l)
			for _, ln := range l.lines {
				if ln.fn.mark != h.mark {
					ln.fn.mark = h.mark
					h.fused = append(h.fused, ln.fn)
				}
			}
		}
		ids = append(ids, l.id)
	}
	return ids
}

// loc returns the location of return address pc, symbolizing it the first
// time: the frames runtime.CallersFrames gives for it, the inlined ones
// first, as runtime/pprof's allFrames does. Locations and functions stay
// for the life of h: a program has a bounded number of them.
func (h *HeapDelta) loc(pc uintptr) *heapLoc {
	if l := h.locs[pc]; l != nil {
		return l
	}
	l := &heapLoc{id: uint64(len(h.locs) + 1), pc: pc}
	if f := runtime.FuncForPC(pc); f != nil {
		n := f.Name()
		l.runtime = strings.HasPrefix(n, "runtime.") || strings.HasPrefix(n, "internal/runtime/")
	}
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		fr, more := frames.Next()
		if fr.Function == "runtime.goexit" {
			break // the bottom of every goroutine: runtime/pprof drops it
		}
		if fr.Function != "" || fr.File != "" {
			k := funcKey{fr.Function, fr.File}
			fn := h.funcs[k]
			if fn == nil {
				fn = &heapFunc{id: uint64(len(h.funcs) + 1), name: fr.Function, file: fr.File}
				h.funcs[k] = fn
			}
			l.lines = append(l.lines, heapLine{fn: fn, line: int64(fr.Line)})
		}
		if !more {
			break
		}
	}
	h.locs[pc] = l
	return l
}
