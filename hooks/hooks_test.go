package hooks

import (
	"strings"
	"sync"
	"testing"

	"github.com/arenaprof/arenaprof/internal/samplingstate"
)

// consumerFunc is a Consumer of a plain function that ignores releases.
type consumerFunc func(*Event)

func (f consumerFunc) Sampled(e *Event) { f(e) }
func (consumerFunc) Released(uint64)    {}

// onConsumerPanic sets the function told when a consumer panics and is
// disabled; nil restores the default, which logs one line with package log.
func onConsumerPanic(fn func(error)) {
	if fn == nil {
		onPanic.Store(nil)
		return
	}
	onPanic.Store(&fn)
}

// restoreMean puts the configured mean back after the test.
func restoreMean(t *testing.T) {
	old := MeanBytes()
	t.Cleanup(func() {
		if err := SetMeanBytes(old); err != nil {
			t.Error(err)
		}
	})
}

func TestRegisterTurnsSamplingOnAndOff(t *testing.T) {
	restoreMean(t)
	if err := SetMeanBytes(4096); err != nil {
		t.Fatal(err)
	}
	if samplingstate.Current().Enabled() {
		t.Fatal("sampling on with no consumer")
	}
	s0 := samplingstate.Current()
	u1 := Register(consumerFunc(func(*Event) {}))
	s1 := samplingstate.Current()
	if s1 == s0 || !s1.Enabled() || s1.MeanBytes != 4096 {
		t.Fatalf("after Register: %+v (same pointer %v)", *s1, s1 == s0)
	}
	u2 := Register(consumerFunc(func(*Event) {}))
	if !samplingstate.Current().Enabled() {
		t.Fatal("second consumer turned sampling off")
	}
	u1()
	u1() // harmless
	if !samplingstate.Current().Enabled() {
		t.Fatal("sampling off while a consumer is left")
	}
	u2()
	if samplingstate.Current().Enabled() {
		t.Fatal("sampling on after the last consumer left")
	}
}

func TestSetMeanBytes(t *testing.T) {
	restoreMean(t)
	defer Register(consumerFunc(func(*Event) {}))()
	cases := []struct {
		set, want int64
		err       bool
	}{
		{1, 1, false},
		{102400, 102400, false},
		{samplingstate.MaxMeanBytes, samplingstate.MaxMeanBytes, false},
		{samplingstate.MaxMeanBytes + 1, samplingstate.MaxMeanBytes, true}, // unchanged
		{0, 0, false},
		{-5, 0, false},
		{77, 77, false},
	}
	for _, c := range cases {
		before := samplingstate.Current()
		err := SetMeanBytes(c.set)
		if (err != nil) != c.err {
			t.Errorf("SetMeanBytes(%d) error %v", c.set, err)
		}
		if got := samplingstate.Current().MeanBytes; got != c.want {
			t.Errorf("after SetMeanBytes(%d): mean %d, want %d", c.set, got, c.want)
		}
		if !c.err && samplingstate.Current() == before {
			t.Errorf("SetMeanBytes(%d) did not publish a new state", c.set)
		}
	}
}

func TestEmitDeliversAndValidates(t *testing.T) {
	var got []Event
	defer Register(consumerFunc(func(e *Event) { got = append(got, *e) }))()
	good := Event{TypeName: "x", Size: 8, Offset: 7, MeanBytes: 1}
	bad := []Event{
		{Size: 0, MeanBytes: 1},
		{Size: 8, Offset: 8, MeanBytes: 1},
		{Size: 8, Offset: -1, MeanBytes: 1},
		{Size: 8, MeanBytes: 0},
		{Size: 8, MeanBytes: samplingstate.MaxMeanBytes + 1},
	}
	Emit(&good)
	for i := range bad {
		if bad[i].validate() == nil {
			t.Errorf("event %+v validated", bad[i])
		}
		Emit(&bad[i])
	}
	if len(got) != 1 || got[0].Offset != 7 {
		t.Fatalf("delivered %+v, want the valid event only", got)
	}
}

type panicky struct{ released []uint64 }

func (p *panicky) Sampled(*Event)     { panic("boom") }
func (p *panicky) Released(id uint64) { p.released = append(p.released, id) }

func TestPanickingConsumerIsDisabledAndCounted(t *testing.T) {
	var reported []error
	onConsumerPanic(func(err error) { reported = append(reported, err) })
	defer onConsumerPanic(nil)
	p := &panicky{}
	defer Register(p)()
	var good int
	defer Register(consumerFunc(func(*Event) { good++ }))()
	e := Event{Size: 8, MeanBytes: 1}
	Emit(&e) // must not panic here
	Emit(&e)
	Release(9)
	if good != 2 {
		t.Errorf("healthy consumer got %d events, want 2", good)
	}
	disabled := 0
	for _, c := range *consumers.Load() {
		if c.disabled.Load() {
			disabled++
			if c.c != p {
				t.Errorf("consumer %s disabled", c.name)
			}
		}
	}
	if disabled != 1 {
		t.Errorf("%d consumers disabled, want the panicking one", disabled)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "boom") || !strings.Contains(reported[0].Error(), "disabled") {
		t.Errorf("reported %v, want the one panic", reported)
	}
	if len(p.released) != 0 {
		t.Errorf("disabled consumer still told of releases: %v", p.released)
	}
}

func TestRegisterNilPanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"Register":      func() { Register(nil) },
		"NewLabels odd": func() { NewLabels("k") },
	} {
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.HasPrefix(r, "arenaprof:") {
					t.Errorf("%s: panic %q", name, r)
				}
			}()
			fn()
		}()
	}
}

func TestConcurrentEmitAndRegister(t *testing.T) {
	restoreMean(t)
	var mu sync.Mutex
	n := 0
	defer Register(consumerFunc(func(*Event) { mu.Lock(); n++; mu.Unlock() }))()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := Event{Size: 8, MeanBytes: 1, Arena: NewArenaID()}
			for i := range 2000 {
				Emit(&e)
				if i%500 == 0 && g == 0 {
					u := Register(consumerFunc(func(*Event) {}))
					_ = SetMeanBytes(int64(1000 + i))
					u()
				}
				_ = samplingstate.Current().Enabled()
			}
			Release(e.Arena)
		}()
	}
	wg.Wait()
	if n != 8*2000 {
		t.Errorf("%d events delivered, want %d", n, 8*2000)
	}
}

func TestNewArenaIDUnique(t *testing.T) {
	seen := map[uint64]bool{}
	for range 1000 {
		id := NewArenaID()
		if id == 0 || seen[id] {
			t.Fatalf("duplicate or zero id %d", id)
		}
		seen[id] = true
	}
}

func TestLabels(t *testing.T) {
	l := NewLabels("b", "2", "a", "1", "b", "3")
	if l.String() != `{a="1", b="3"}` {
		t.Errorf("labels %v", l)
	}
	if v, ok := l.Get("b"); !ok || v != "3" {
		t.Errorf("Get(b) = %q %v", v, ok)
	}
	if _, ok := l.Get("c"); ok {
		t.Error("Get(c) found")
	}
	if NewLabels("a", "1", "b", "3").Key() != l.Key() || NewLabels().Key() != "" {
		t.Error("keys differ for equal sets")
	}
	var keys []string
	for k := range l.All {
		keys = append(keys, k)
		break
	}
	if len(keys) != 1 || keys[0] != "a" {
		t.Errorf("All with early stop: %v", keys)
	}
}
