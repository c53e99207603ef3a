package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/testkit/fixture"
)

func TestTableBySizeAndLabels(t *testing.T) {
	p := fixture.Arena(t)
	res, err := Table(p, TableOptions{By: "size"})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range res.Rows {
		if !strings.HasSuffix(r.Key, " B") {
			t.Errorf("size class key %q", r.Key)
		}
		sum += r.Bytes
	}
	if sum != res.Total.Bytes {
		t.Errorf("size classes sum to %d, total %d", sum, res.Total.Bytes)
	}
	var buf bytes.Buffer
	if err := FormatTable(&buf, res, FormatOptions{}); err != nil || !strings.Contains(buf.String(), "OBJECT SIZE") {
		t.Errorf("format: %v\n%s", err, buf.String())
	}
	for _, tc := range []struct{ label, want string }{
		{"nosuch", `no sample carries the label "nosuch"; the profile's string labels are handler, type`},
		{"bytes", "numeric label"},
		{"sampling_mean", "numeric label"},
	} {
		_, err := Table(p, TableOptions{By: "label=" + tc.label})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("label %q: error %v, want %q", tc.label, err, tc.want)
		}
	}
	if _, err := Table(p, TableOptions{By: "label=" + "handler"}); err != nil {
		t.Errorf("a label some samples carry: %v", err)
	}
}

func TestFormatFullKeys(t *testing.T) {
	res, err := Table(fixture.Arena(t), TableOptions{By: "stack"})
	if err != nil {
		t.Fatal(err)
	}
	var short, full bytes.Buffer
	if err := FormatTable(&short, res, FormatOptions{Width: 60}); err != nil {
		t.Fatal(err)
	}
	if err := FormatTable(&full, res, FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(short.String(), "…") || strings.Contains(full.String(), "…") {
		t.Errorf("short:\n%s\nfull:\n%s", short.String(), full.String())
	}
	for _, r := range res.Rows {
		if !strings.Contains(full.String(), r.Key) {
			t.Errorf("full table lacks %q", r.Key)
		}
	}
}
