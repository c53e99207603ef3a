package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	rpprof "runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/holdings"
)

// readmeCommand is one command line of a code block of README.md or a
// guide in docs/.
type readmeCommand struct {
	file   string   // README.md or docs/NAME.md
	line   string   // as written, continuation lines joined
	output []string // the lines shown after a "$ " command, up to the next one
	run    bool     // run it on readmeDir's files; otherwise only parse its flags
}

// runGuides are the guides whose commands TestREADMECommands runs, as it
// runs README.md's: they read the files readmeDir writes (they were
// README's sections). The commands of the other guides read a service of
// their own (advise, html -open): their flags are parsed, not run.
var runGuides = []string{
	"docs/diff.md", "docs/fleet.md", "docs/getting-started.md", "docs/live-arenas.md",
	"docs/opentelemetry.md", "docs/pyroscope.md", "docs/reading-numbers.md",
}

// docFiles returns README.md and the guides in docs/ (but docs/cli.md,
// which holds the commands' help, not commands), as paths relative to the
// repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, g := range guides {
		if f := filepath.ToSlash(strings.TrimPrefix(g, filepath.Join("..", "..")+string(filepath.Separator))); f != "docs/cli.md" {
			files = append(files, f)
		}
	}
	return files
}

// readmeCommands returns every line of the code blocks of README.md and
// the guides that runs go tool pprof or arenaprof (as "arenaprof ..." or
// "go run ./cmd/arenaprof ..."), with a leading "$ " and a trailing
// "# comment" removed and "\"-continued lines joined.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	var cmds []readmeCommand
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		runs := file == "README.md" || slices.Contains(runGuides, file)
		in := false
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				in = !in
				continue
			}
			if !in {
				continue
			}
			s, prompt := strings.CutPrefix(strings.TrimSpace(l), "$ ")
			if w := strings.Fields(s); len(w) > 1 && w[0] == "arenaprof" && strings.HasSuffix(w[1], ":") {
				continue // a message the command prints ("arenaprof top: ..."), not a command
			}
			if !strings.HasPrefix(s, "go tool pprof ") && !strings.HasPrefix(s, "arenaprof ") && !strings.HasPrefix(s, "go run ./cmd/arenaprof ") {
				installs := slices.ContainsFunc([]string{"go get ", "go install ", "go -C ", "go mod ", "git clone "}, func(p string) bool {
					return strings.HasPrefix(s, p)
				}) // TestREADMEInstall runs README's
				if strings.Contains(s, "arenaprof ") && !installs && strings.HasPrefix(s, "go ") {
					t.Errorf("%s line %d runs arenaprof in a way this test does not know: %q", file, i+1, l)
				}
				continue
			}
			for strings.HasSuffix(s, "\\") && i+1 < len(lines) {
				i++
				s = strings.TrimSuffix(s, "\\") + " " + strings.TrimSpace(lines[i])
			}
			c := readmeCommand{file: file, line: stripComment(s), run: runs}
			if prompt {
				for j := i + 1; j < len(lines) && !strings.HasPrefix(lines[j], "$ ") && !strings.HasPrefix(lines[j], "```"); j++ {
					c.output = append(c.output, lines[j])
				}
			}
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// stripComment removes a shell comment: a # outside quotes after a space.
func stripComment(s string) string {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && i > 0 && s[i-1] == ' ':
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// shellWords splits a command line as sh does for the README's lines:
// words separated by spaces, single and double quotes removed.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// readmeDir writes the files the README's commands read: arena.pb.gz (the
// quick start's profile, from a shorter run), heap.pb.gz (a Go heap
// profile), before.pb.gz and after.pb.gz (two runs, one doubling a type),
// arenas.pb.gz (live arenas) and peak.pb.gz (an arena profile).
func readmeDir(t *testing.T, goBin string) string {
	t.Helper()
	dir := t.TempDir()
	qs := exec.Command(goBin, "run", "../../examples/quickstart", "-requests", "5000", "-quiet", "-o", filepath.Join(dir, "arena.pb.gz"))
	if out, err := qs.CombinedOutput(); err != nil {
		t.Fatalf("quick start: %v\n%s", err, out)
	}
	var heap bytes.Buffer
	runtime.GC()
	if err := rpprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	copyFile := func(name, from string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "heap.pb.gz"), heap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile("before.pb.gz", diffProfileFile(t, "base.pb.gz", 1024, 11, 64000, 4000))
	copyFile("after.pb.gz", diffProfileFile(t, "new.pb.gz", 1024, 12, 128000, 4000))
	// One steady load captured over 1 s and 1.5 s, through an arena.Pool
	// (docs/diff.md's -per examples).
	copyFile("base.pb.gz", steadyCapture(t, "base.pb.gz", 1000, time.Second, 1))
	copyFile("long.pb.gz", steadyCapture(t, "long.pb.gz", 1000, 1500*time.Millisecond, 1))
	leaky, busy := leakySite(), busySite()
	copyFile("arenas.pb.gz", holdingsFile(t, "arenas.pb.gz", []holdings.Holding{
		{Stack: leaky, Age: 2 * time.Hour, Arenas: 2, Reserved: 6 << 20, Used: 6 << 20},
		{Stack: busy, Age: 100 * time.Millisecond, Arenas: 3, Reserved: 192 << 10, Used: 96 << 10},
		{Stack: busy, Arenas: 5, Reserved: 20 << 20, Pool: 1},
	}))
	copyFile("peak.pb.gz", filepath.Join(dir, "arena.pb.gz"))
	return dir
}

// TestREADMECommands runs every go tool pprof and arenaprof command line
// of README.md's code blocks: on the files readmeDir writes, and with the
// hosts of the README's URLs served by a test server (net/http/pprof, and
// the quick start's profile at /debug/arenaprof). A command that fails, a
// -tagfocus that matches nothing, or a table whose column headings differ
// from the README's sample output fails the test. The -pyroscope commands
// have their flags and selectors parsed and checked; with a real Pyroscope
// server at $ARENAPROF_PYROSCOPE_URL (.ci/run starts one) they also run
// against it, on the README's service pushed there first. The sample
// outputs whose selectors are elided ("fleet_…") are the fleet end-to-end
// test's commands (TestPyroscopeEndToEnd/fleet in export/agent runs them
// on its own services).
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quick start and go tool pprof")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	dir := readmeDir(t, goBin)
	arenaData, err := os.ReadFile(filepath.Join(dir, "arena.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/arenaprof", func(w http.ResponseWriter, _ *http.Request) { w.Write(arenaData) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	pyroURL := readmePyroscope(t, arenaData)

	cmds := readmeCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in README.md and docs/; the parser is broken", len(cmds))
	}
	for _, c := range cmds {
		t.Run(c.file+": "+c.line, func(t *testing.T) {
			words := shellWords(c.line)
			for i := range words {
				for _, h := range []string{"host:6060", "127.0.0.1:8080"} {
					words[i] = strings.Replace(words[i], "http://"+h+"/", "http://"+host+"/", 1)
				}
				if words[i] == "URL" {
					words[i] = "http://pyroscope:4040"
				}
			}
			if words[0] == "go" && words[1] == "tool" {
				runReadmePprof(t, goBin, dir, words[3:])
				return
			}
			args := words[1:]
			if words[0] == "go" {
				args = words[3:]
			}
			if !c.run {
				// Its flags exist and parse: -h after them ends the parse
				// with the help, after an error for any unknown flag.
				var out, errOut bytes.Buffer
				if code := run(append(slices.Clone(args), "-h"), &out, &errOut); code != 0 {
					t.Fatalf("flags do not parse: exit %d: %s", code, errOut.String())
				}
				return
			}
			if strings.Contains(c.line, "-pyroscope") {
				var err error
				if args[0] == "top" {
					_, err = parseTopArgs(args[1:])
				} else {
					_, err = parseDiffArgs(args[1:])
				}
				if err != nil {
					t.Fatal(err)
				}
				if pyroURL != "" && !strings.Contains(c.line, "…") {
					runReadmePyroscope(t, pyroURL, args)
				}
				return
			}
			t.Chdir(dir)
			var out, errOut bytes.Buffer
			if code := run(args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			checkReadmeHeadings(t, c.output, out.String())
		})
	}
}

// runReadmePprof runs go tool pprof with args in dir. A -http command is
// run with -no_browser until it serves its web interface.
func runReadmePprof(t *testing.T, goBin, dir string, args []string) {
	t.Helper()
	web := false
	for _, a := range args {
		web = web || strings.HasPrefix(a, "-http=")
	}
	if web {
		args = append([]string{"-no_browser"}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := exec.Command(goBin, "tool", "-n", "pprof").Output()
	if err != nil {
		t.Fatalf("go tool -n pprof: %v", err)
	}
	// The pprof binary itself, so that killing it ends the web server.
	cmd := exec.CommandContext(ctx, strings.TrimSpace(string(bin)), args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	if web {
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		sc := bufio.NewScanner(stderr)
		var seen []string
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if strings.Contains(sc.Text(), "Serving web UI on http://") {
				return
			}
		}
		t.Fatalf("no web interface: %s", strings.Join(seen, "\n"))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "matched no samples") {
		t.Fatalf("a filter matches nothing:\n%s", out)
	}
}

// checkReadmeHeadings compares the column headings of the README's sample
// output of a command (the line holding the interval or RESERVED column)
// with the command's output.
func checkReadmeHeadings(t *testing.T, readme []string, out string) {
	t.Helper()
	isHead := func(l string) bool {
		return (strings.Contains(l, " INTERVAL") || strings.Contains(l, "RESERVED")) && !strings.Contains(l, ":")
	}
	for _, l := range readme {
		if !isHead(l) {
			continue
		}
		for _, o := range strings.Split(out, "\n") {
			if isHead(o) {
				if got, want := strings.Join(strings.Fields(o), " "), strings.Join(strings.Fields(l), " "); got != want {
					t.Errorf("column headings differ from the README's:\n got %q\nwant %q", got, want)
				}
				return
			}
		}
		t.Errorf("output has no column headings; the README shows %q:\n%s", l, out)
	}
}

// readmePyroscope pushes the README's example service to the Pyroscope
// server at $ARENAPROF_PYROSCOPE_URL, if set: the quick start's profile as
// service "checkout", env=prod, pod checkout-7…, versions v1 and v2. It
// returns the server's URL, or "" when there is none.
func readmePyroscope(t *testing.T, arenaData []byte) string {
	url := os.Getenv("ARENAPROF_PYROSCOPE_URL")
	if url == "" {
		return ""
	}
	up, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := time.Now()
	for i, v := range []string{"v1", "v2"} {
		u := &agent.Upload{
			AppName: "checkout",
			Labels:  map[string]string{"env": "prod", "pod": "checkout-7f9c" + v, "version": v},
			Profile: "arena",
			From:    now.Add(time.Duration(i-3) * time.Minute),
			Until:   now.Add(time.Duration(i-2) * time.Minute),
			Data:    arenaData,
		}
		if err := up.Upload(ctx, u); err != nil {
			t.Fatalf("push the README's service to %s: %v", url, err)
		}
	}
	return url
}

// runReadmePyroscope runs a README -pyroscope command against the server
// at url, retrying while the pushed data is not yet queryable (up to a
// minute). The -fail-above gate may fail on this data (exit 3); any other
// failure fails the test.
func runReadmePyroscope(t *testing.T, url string, args []string) {
	t.Helper()
	args = slices.Clone(args)
	for i, a := range args {
		args[i] = strings.Replace(a, "http://pyroscope:4040", url, 1)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code == 0 || code == diffGateCode && slices.Contains(args, "-fail-above") {
			if !strings.Contains(out.String(), "total") {
				t.Fatalf("%v against %s printed no table:\n%s", args, url, out.String())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v against %s: exit %d: %s", args, url, code, errOut.String())
		}
		time.Sleep(2 * time.Second)
	}
}

// mdLink matches a markdown link or image's target: "](target)".
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchor returns the anchor GitHub gives a markdown heading: lower
// case, punctuation but '-' and '_' dropped, spaces made '-'.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdAnchors returns the anchors of the headings of a markdown file.
func mdAnchors(data string) map[string]bool {
	anchors := map[string]bool{}
	in := false
	for _, l := range strings.Split(data, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
		}
		if !in && strings.HasPrefix(l, "#") {
			anchors[headingAnchor(strings.TrimLeft(l, "#"))] = true
		}
	}
	return anchors
}

// inlineCode matches a code span.
var inlineCode = regexp.MustCompile("`[^`]*`")

// mdProse returns data without its fenced code blocks and code spans,
// where "](x)" is code, not a link.
func mdProse(data string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(data, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(inlineCode.ReplaceAllString(l, ""))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestDocLinks checks every relative link of README.md and the guides in
// docs/ (and of the documents they link to: ACCURACY.md, BENCHMARKS.md):
// its file exists, and its #anchor, if any, is a heading of that file.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := append(docFiles(t), "docs/cli.md", "ACCURACY.md", "BENCHMARKS.md")
	read := func(rel string) (string, bool) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return string(data), err == nil
	}
	checked := 0
	for _, file := range files {
		data, ok := read(file)
		if !ok {
			t.Fatalf("%s is missing", file)
		}
		for _, m := range mdLink.FindAllStringSubmatch(mdProse(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			p, anchor, _ := strings.Cut(target, "#")
			dest := file
			if p != "" {
				dest = path.Clean(path.Join(path.Dir(file), p))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
					t.Errorf("%s links to %s: %s does not exist", file, target, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			d, ok := read(dest)
			if !ok || !strings.HasSuffix(dest, ".md") || !mdAnchors(d)[anchor] {
				t.Errorf("%s links to %s: %s has no heading with anchor %q", file, target, dest, anchor)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d links; the parser is broken", checked)
	}
}
