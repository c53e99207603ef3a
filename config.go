package arenaprof

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/arenaprof/arenaprof/internal/redact"
)

// redacted replaces a secret wherever a Config is printed.
const redacted = "REDACTED"

// String describes c with its credentials redacted: the password of
// PyroscopeURL and OTLPURL (or their whole user information when there is
// no password: a lone user name is often a token), the values of their
// query parameters whose names look like credentials (token, key, secret,
// password, auth, signature, ...), and Pyroscope and OTLP as their own
// String redacts them. It serves
// fmt's %v, %+v and %s.
func (c Config) String() string {
	var b strings.Builder
	b.WriteString("{")
	sep := func() {
		if b.Len() > 1 {
			b.WriteString(" ")
		}
	}
	for _, f := range c.fields() {
		sep()
		fmt.Fprintf(&b, "%s:%v", f.name, f.value)
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String, so that %#v redacts too.
func (c Config) GoString() string { return "arenaprof.Config" + c.String() }

// LogValue gives log/slog the fields of c that are set, redacted as in
// String.
func (c Config) LogValue() slog.Value {
	fs := c.fields()
	attrs := make([]slog.Attr, 0, len(fs))
	for _, f := range fs {
		attrs = append(attrs, slog.Any(f.name, f.value))
	}
	return slog.GroupValue(attrs...)
}

// MarshalJSON gives the fields of c that are set, redacted as in String;
// Mux and Logger are given as whether they are set.
func (c Config) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	for i, f := range c.fields() {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(f.name)
		b.Write(k)
		b.WriteString(":")
		v := f.value
		switch x := v.(type) {
		case time.Duration:
			v = x.String()
		case fmt.Stringer:
			// Pyroscope, OTLP: its own JSON if it has one (redacting as
			// its String does), else its String.
			if m, ok := v.(json.Marshaler); ok {
				raw, err := m.MarshalJSON()
				if err != nil {
					return nil, err
				}
				b.Write(raw)
				continue
			}
			v = x.String()
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(raw)
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

type configField struct {
	name  string
	value any
}

// fields returns the fields of c that are set, secrets redacted.
func (c Config) fields() []configField {
	var fs []configField
	add := func(set bool, name string, value any) {
		if set {
			fs = append(fs, configField{name, value})
		}
	}
	add(c.AppName != "", "AppName", c.AppName)
	if len(c.Labels) > 0 {
		var b strings.Builder
		for i, k := range slices.Sorted(maps.Keys(c.Labels)) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(k + "=" + c.Labels[k])
		}
		fs = append(fs, configField{"Labels", b.String()})
	}
	add(routerOf(c.Mux) != nil, "Mux", true)
	add(c.PyroscopeURL != "", "PyroscopeURL", redact.URL(c.PyroscopeURL, redacted))
	add(c.Pyroscope != nil, "Pyroscope", c.Pyroscope)
	add(c.OTLPURL != "", "OTLPURL", redact.URL(c.OTLPURL, redacted))
	add(c.OTLP != nil, "OTLP", c.OTLP)
	add(c.Dir != "", "Dir", c.Dir)
	add(c.Interval != 0, "Interval", c.Interval)
	add(len(c.Profiles) > 0, "Profiles", strings.Join(c.Profiles, ","))
	add(c.SampleMeanBytes != 0, "SampleMeanBytes", c.SampleMeanBytes)
	add(c.MaxBuckets != 0, "MaxBuckets", c.MaxBuckets)
	add(c.MaxConcurrentBuilds != 0, "MaxConcurrentBuilds", c.MaxConcurrentBuilds)
	add(c.Logger != nil, "Logger", true)
	return fs
}
