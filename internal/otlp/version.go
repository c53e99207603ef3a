package otlp

import (
	"fmt"
	"strings"
)

// Version is a wire format of the OTLP profiles signal (the version of
// opentelemetry-proto's go.opentelemetry.io/proto/otlp/profiles/v1development
// module). The formats differ in the field numbers of the Sample message:
//
//	           stack_index  values  attribute_indices  link_index
//	v0.2.0          1          2            3               4
//	v0.3.0          1          4            2               3
//
// so a reader of the other format fails on each sample or misreads it.
type Version uint8

const (
	// V030 is profiles v0.3.0 (opentelemetry-proto v1.10.0), read by
	// Grafana Pyroscope v2.2 and OpenTelemetry Collector v0.148.0 and
	// later. It is the zero value: the current format.
	V030 Version = iota
	// V020 is profiles v0.2.0 (opentelemetry-proto v1.9.0), read by
	// Grafana Pyroscope v1.19 and OpenTelemetry Collector v0.147.0 and
	// earlier.
	V020
)

// String returns the version as ParseVersion reads it: "v0.3.0" or
// "v0.2.0".
func (v Version) String() string {
	switch v {
	case V030:
		return "v0.3.0"
	case V020:
		return "v0.2.0"
	}
	return fmt.Sprintf("Version(%d)", uint8(v))
}

// ParseVersion reads a profiles version as users write it: "v0.3.0" or
// "v0.2.0", the leading "v" optional, surrounding white space ignored. The
// empty string is the zero value, V030.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	switch t {
	case "", "0.3.0":
		return V030, nil
	case "0.2.0":
		return V020, nil
	}
	return 0, fmt.Errorf("OTLP profiles version %q: want v0.3.0 or v0.2.0", s)
}
