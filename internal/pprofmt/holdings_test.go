package pprofmt

import (
	"testing"
	"time"
)

func TestAgeBucket(t *testing.T) {
	for _, c := range []struct {
		age  time.Duration
		want string
	}{
		{0, "<1s"},
		{999 * time.Millisecond, "<1s"},
		{time.Second, "1s-10s"},
		{10 * time.Second, "10s-1m"},
		{59 * time.Second, "10s-1m"},
		{time.Minute, "1m-10m"},
		{10 * time.Minute, "10m-1h"},
		{time.Hour, ">1h"},
		{1000 * time.Hour, ">1h"},
	} {
		if got := AgeBucket(c.age); got != c.want {
			t.Errorf("AgeBucket(%v) = %q, want %q", c.age, got, c.want)
		}
	}
	for _, c := range []struct {
		bucket string
		d      time.Duration
		want   bool
	}{
		{"<1s", 0, true},
		{"<1s", time.Second, false},
		{"10m-1h", 10 * time.Minute, true},
		{">1h", 10 * time.Minute, true},
		{"1m-10m", 10 * time.Minute, false},
		{"bogus", 0, false},
	} {
		if got := AgeAtLeast(c.bucket, c.d); got != c.want {
			t.Errorf("AgeAtLeast(%q, %v) = %v", c.bucket, c.d, got)
		}
	}
}
