package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun runs the service and checks the /users row against the bytes
// worked out by hand: a user is 40 bytes (an int64 and two strings), its
// name 8 and its e-mail 24 (rounded up to 8), so n users take 72n bytes,
// for n = 10, 20, ..., 100. /echo's bytes depend on how the body arrives
// (ReadAll's growths); /health takes no arena and has no row.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 20); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[0]+" "+f[1]] = f[2:]
	}
	if got := strings.Join(rows["GET /users"], " "); got != "20 3960 720 7200" {
		t.Errorf("GET /users: %q, want requests 20, mean 3960, min 720, max 7200", got)
	}
	if r := rows["POST /echo"]; len(r) == 0 || r[0] != "20" {
		t.Errorf("POST /echo: %q, want 20 requests", r)
	}
	if _, ok := rows["GET /health"]; ok || len(rows) != 2 {
		t.Errorf("rows %v, want /users and /echo only", rows)
	}
}
