package agent

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// otlpFromEnv fills the fields cfg leaves unset from OpenTelemetry's
// environment variables (see [OTLPConfig]), read through getenv. asIs
// reports that the URL is a signal-specific endpoint, used without
// appending "/v1development/profiles".
func otlpFromEnv(cfg OTLPConfig, getenv func(string) string) (_ OTLPConfig, asIs bool, _ error) {
	if cfg.URL == "" {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT")); v != "" {
			cfg.URL, asIs = v, true
		} else {
			cfg.URL = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
		}
	}
	headers := map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_PROFILES_HEADERS"} {
		kv, err := parseOTELList(getenv(name))
		if err != nil {
			// The values are often credentials: name the variable only.
			return cfg, false, fmt.Errorf("agent: %s: %w", name, err)
		}
		for k, v := range kv {
			headers[k] = v // the signal-specific variable wins
		}
	}
	if len(headers) > 0 {
		merged := make(map[string]string, len(headers)+len(cfg.Headers))
		for k, v := range headers {
			merged[k] = v
		}
		for k, v := range cfg.Headers {
			for h := range merged { // header names are case-insensitive
				if strings.EqualFold(h, k) {
					delete(merged, h)
				}
			}
			merged[k] = v
		}
		cfg.Headers = merged
	}
	if cfg.Compression == "" {
		cfg.Compression = firstEnv(getenv, "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION")
	}
	if cfg.Timeout == 0 {
		for _, name := range []string{"OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
			v := strings.TrimSpace(getenv(name))
			if v == "" {
				continue
			}
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms < 0 || ms > int64(24*time.Hour/time.Millisecond) {
				return cfg, false, fmt.Errorf("agent: %s=%q: want milliseconds, 0 to 86400000", name, v)
			}
			cfg.Timeout = time.Duration(ms) * time.Millisecond
			break
		}
	}
	if cfg.ProfilesVersion == "" {
		cfg.ProfilesVersion = strings.TrimSpace(getenv("ARENAPROF_OTLP_PROFILES_VERSION"))
	}
	attrs, err := parseOTELList(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return cfg, false, fmt.Errorf("agent: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if len(attrs) > 0 {
		for k, v := range cfg.ResourceAttributes {
			attrs[k] = v
		}
		cfg.ResourceAttributes = attrs
	}
	return cfg, asIs, nil
}

func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// parseOTELList reads the "key1=value1,key2=value2" lists of
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES: white space
// around members, keys and values is dropped, values are percent-decoded,
// empty members are skipped, a later key replaces an earlier one. An empty
// key, a member without '=' or a bad percent escape is an error that does
// not quote the value (headers carry credentials).
func parseOTELList(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m := map[string]string{}
	for i, member := range strings.Split(s, ",") {
		member = strings.TrimSpace(member)
		if member == "" {
			continue
		}
		k, v, ok := strings.Cut(member, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("member %d: want key=value", i+1)
		}
		dk, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("member %d: bad percent-encoding in the key", i+1)
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("member %d (%q): bad percent-encoding in the value", i+1, dk)
		}
		if strings.ContainsAny(dk+dv, "\r\n\x00") {
			return nil, errors.New("a key or value holds a line break or NUL")
		}
		m[dk] = dv
	}
	return m, nil
}
