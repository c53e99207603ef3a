package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocExamples checks that the examples README.md and
// docs/getting-started.md list (the names in code spans of their table
// row of `examples/`) are the directories of examples/, no more, no
// fewer: the lists once named 4 and 3 of 5.
func TestDocExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if e.IsDir() {
			want = append(want, e.Name())
		}
	}
	name := regexp.MustCompile("`([a-z0-9]+)`") // a code span of a name alone, not `go run ./examples/NAME` nor `Put`
	for _, file := range []string{"README.md", "docs/getting-started.md"} {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		var row string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "| `examples/` |") {
				row = strings.TrimPrefix(l, "| `examples/` |")
				break
			}
		}
		if row == "" {
			t.Errorf("%s has no table row for `examples/`", file)
			continue
		}
		var got []string
		for _, m := range name.FindAllStringSubmatch(row, -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s lists the examples %q; examples/ holds %q", file, got, want)
		}
	}
}
