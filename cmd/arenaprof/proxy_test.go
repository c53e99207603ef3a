package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// needProxyEnv names the variable under which a test that needs the
// module proxy fails where it cannot reach it, instead of skipping:
// .ci/run sets it, so that such a test never passes there unrun.
const needProxyEnv = "ARENAPROF_NEED_PROXY"

// netFailures are the errors of a go command that could not reach a
// server: the net package's and net/http's words for it.
var netFailures = []string{
	"dial tcp", "no such host", "connection refused", "network is unreachable",
	"i/o timeout", "TLS handshake timeout", "connection reset by peer", "server misbehaving",
	"proxyconnect", "Client.Timeout exceeded",
}

// proxyUnreachable says why a go command run with env, which failed with
// output out, could not reach the module proxy: GOPROXY=off, or the
// line of out naming a network failure; "" when neither (the proxy
// answered, or the command failed otherwise).
func proxyUnreachable(goBin string, env []string, out []byte) string {
	cmd := exec.Command(goBin, "env", "GOPROXY")
	cmd.Env = append(env[:len(env):len(env)], "GOTOOLCHAIN=local") // not the one to fetch
	if p, err := cmd.Output(); err == nil {
		list := strings.FieldsFunc(strings.TrimSpace(string(p)), func(r rune) bool { return r == ',' || r == '|' })
		if len(list) == 0 || list[0] == "off" {
			return "GOPROXY=off"
		}
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range netFailures {
			if strings.Contains(line, f) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// skipWithoutProxy skips t, saying why, where a go command run with env
// for what failed with output out because the module proxy cannot be
// reached; with ARENAPROF_NEED_PROXY set (.ci/run) it fails t instead.
// Otherwise it returns, and the caller fails t with the command's error.
func skipWithoutProxy(t *testing.T, goBin string, env []string, what string, out []byte) {
	t.Helper()
	why := proxyUnreachable(goBin, env, out)
	if why == "" {
		return
	}
	msg := what + " needs the module proxy, which cannot be reached here: " + why
	if os.Getenv(needProxyEnv) != "" {
		t.Fatalf("%s (%s is set: this test must run)\n%s", msg, needProxyEnv, out)
	}
	t.Skip(msg)
}

// TestProxyUnreachable: a go command that fetches a toolchain with the
// proxy off or refusing (run here, with an empty module cache), or with
// no address for it (its error as the go command words it), is told
// from one whose proxy answered.
func TestProxyUnreachable(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, tc := range []struct {
		proxy string
		out   string // the go command's output; run when empty
		want  string // a part of what proxyUnreachable says, "" for nothing
	}{
		{"off", "", "GOPROXY=off"},
		{"http://127.0.0.1:1", "", "dial tcp 127.0.0.1:1: connect: connection refused"},
		{"https://nonexistent.invalid", "go: download go1.27.3: golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64: Get \"https://nonexistent.invalid/golang.org/toolchain/@v/v0.0.1-go1.27.3.linux-amd64.zip\": dial tcp: lookup nonexistent.invalid on 10.255.255.53:53: no such host", "no such host"},
		{"https://proxy.golang.org,direct", "go: download go1.27.99: golang.org/toolchain@v0.0.1-go1.27.99.linux-amd64: reading https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go1.27.99.linux-amd64.zip: 403 Forbidden\n\tserver response: This module version is not available.", ""},
	} {
		env := append(os.Environ(), "GOPROXY="+tc.proxy, "GOMODCACHE="+t.TempDir(), "GOTOOLCHAIN=go1.27.3")
		out := []byte(tc.out)
		if tc.out == "" {
			cmd := exec.Command(goBin, "version")
			cmd.Env = env
			if out, err = cmd.CombinedOutput(); err == nil {
				t.Fatalf("GOPROXY=%s GOTOOLCHAIN=go1.27.3 go version with an empty module cache ran: %s", tc.proxy, out)
			}
		}
		got := proxyUnreachable(goBin, env, out)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("GOPROXY=%s: %q, want %q in it\n%s", tc.proxy, got, tc.want, out)
		}
	}
}
