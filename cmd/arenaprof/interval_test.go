package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestIntervalJSON(t *testing.T) {
	code, out, errOut := runCLI("interval", "-samples", "8", "-tail", "10908", "-window", "aligned", "-json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	want := map[string]float64{
		"samples": 8, "tail": 10908, "mean": 102400, "confidence": 0.95,
		"estimate": 8*102399 + 10908, "unsampled_lo": 353666, "unsampled_hi": 1476871,
		"lo": 353666 + 10908, "hi": 1476871 + 10908,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if got["window"] != "aligned" {
		t.Errorf("window = %v", got["window"])
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("not one line: %q", out)
	}
}

func TestIntervalHuman(t *testing.T) {
	code, out, _ := runCLI("interval", "-samples", "8", "-tail", "10908", "-window", "aligned")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"estimate         830100 bytes", "95% interval     [364574, 1487779] bytes", "unsampled bytes  [353666, 1476871]", "window           aligned"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Defaults: window both, mean 102400; s = 0 has a finite upper bound.
	code, out, _ = runCLI("interval", "-samples", "0", "-tail", "0", "-mean", "4096", "-confidence", "0.9")
	if code != 0 || !strings.Contains(out, "window           both") || !strings.Contains(out, "90% interval") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestIntervalBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-samples", "8"},
		{"-tail", "8"},
		{"-samples", "x", "-tail", "9"},
		{"-samples", "8", "-tail", "3"},
		{"-samples", "-1", "-tail", "3"},
		{"-samples", "8", "-tail", "9", "-mean", "0"},
		{"-samples", "8", "-tail", "9", "-mean", "2000000000000"},
		{"-samples", "8", "-tail", "9", "-confidence", "1"},
		{"-samples", "8", "-tail", "9", "-confidence", "NaN"},
		{"-samples", "8", "-tail", "9", "-window", "middle"},
		{"-samples", "8", "-tail", "9", "extra"},
		{"-bogus"},
	} {
		code, out, errOut := runCLI(append([]string{"interval"}, args...)...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "arenaprof interval: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI("interval", "-h"); code != 0 || !strings.Contains(errOut, "-samples") {
		t.Errorf("-h: exit %d, %q", code, errOut)
	}
	// The help names what is required and prints no raw flag defaults.
	_, help, _ := runCLI("help", "interval")
	for _, bad := range []string{"(default", "(required)"} {
		if strings.Contains(help, bad) {
			t.Errorf("help interval contains %q:\n%s", bad, help)
		}
	}
	if !strings.Contains(help, "required:") || !strings.Contains(help, "unsampled bytes") {
		t.Errorf("help interval lacks the required flags or the output lines:\n%s", help)
	}
}

// FuzzIntervalFlags: any flag values give exit 0 with output, or exit 2
// with a one-line error; never a panic or a NaN.
func FuzzIntervalFlags(f *testing.F) {
	f.Add("8", "10908", "102400", "0.95", "both")
	f.Add("0", "0", "1", "0.5", "aligned")
	f.Add("-3", "x", "0", "NaN", "sideways")
	f.Add("10000", "99999999", "4096", "0.999999", "end")
	f.Fuzz(func(t *testing.T, s, u, mean, conf, window string) {
		var out, errb bytes.Buffer
		code := run([]string{"interval", "-samples", s, "-tail", u, "-mean", mean, "-confidence", conf, "-window", window, "-json"}, &out, &errb)
		switch code {
		case 0:
			if strings.Contains(out.String(), "NaN") || errb.Len() != 0 {
				t.Fatalf("output %q, stderr %q", out.String(), errb.String())
			}
		case 2:
			if out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 {
				t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}
