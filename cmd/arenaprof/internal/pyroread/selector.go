package pyroread

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Matcher is one term of a label selector: Name Op "Value".
type Matcher struct {
	Name, Op, Value string
}

// Selector is a parsed Pyroscope label selector, {k="v", k2=~"re", ...}.
type Selector []Matcher

// maxSelector bounds the length of a selector a user gives.
const maxSelector = 8 << 10

// labelName is what Pyroscope accepts as a label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.]*$`)

// ParseSelector reads a label selector as Pyroscope's query language
// writes one: braces around comma-separated matchers, each a label name,
// an operator (=, !=, =~, !~) and a double- or back-quoted value, e.g.
// {service_name="shop", env=~"prod|staging"}. Regular expressions must
// compile (RE2, as the server's). The empty selector {} is refused:
// Pyroscope needs at least one matcher.
func ParseSelector(s string) (Selector, error) {
	if len(s) > maxSelector {
		return nil, fmt.Errorf("label selector longer than %d bytes", maxSelector)
	}
	in := strings.TrimSpace(s)
	if !strings.HasPrefix(in, "{") || !strings.HasSuffix(in, "}") {
		return nil, errors.New(`a label selector is enclosed in braces, e.g. {service_name="shop"}`)
	}
	in = strings.TrimSpace(in[1 : len(in)-1])
	var sel Selector
	for in != "" {
		i := 0
		for i < len(in) && (in[i] == '_' || in[i] == '.' || in[i] >= 'a' && in[i] <= 'z' || in[i] >= 'A' && in[i] <= 'Z' || i > 0 && in[i] >= '0' && in[i] <= '9') {
			i++
		}
		name := in[:i]
		if !labelName.MatchString(name) {
			return nil, fmt.Errorf("expected a label name at %q", cut(in))
		}
		in = strings.TrimSpace(in[i:])
		var op string
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(in, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("expected =, !=, =~ or !~ after %s", name)
		}
		in = strings.TrimSpace(in[len(op):])
		q, err := strconv.QuotedPrefix(in)
		if err != nil || strings.HasPrefix(q, "'") {
			return nil, fmt.Errorf("expected a quoted value after %s%s, e.g. %s%s\"value\"", name, op, name, op)
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return nil, fmt.Errorf("bad quoted value %s", cut(q))
		}
		if op == "=~" || op == "!~" {
			if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, fmt.Errorf("%s%s: bad regular expression: %v", name, op, err)
			}
		}
		sel = append(sel, Matcher{name, op, v})
		in = strings.TrimSpace(in[len(q):])
		if in == "" {
			break
		}
		if in[0] != ',' {
			return nil, fmt.Errorf("expected , or } at %q", cut(in))
		}
		in = strings.TrimSpace(in[1:])
	}
	if len(sel) == 0 {
		return nil, errors.New(`empty label selector: name at least the service, e.g. {service_name="shop"}`)
	}
	return sel, nil
}

func cut(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// String writes the selector as the server reads it.
func (s Selector) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Name)
		b.WriteString(m.Op)
		b.WriteString(strconv.Quote(m.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// With returns s and the matchers ms, without changing s.
func (s Selector) With(ms ...Matcher) Selector {
	return append(append(Selector(nil), s...), ms...)
}

// Constrains reports whether some matcher of s names the label.
func (s Selector) Constrains(label string) bool {
	for _, m := range s {
		if m.Name == label {
			return true
		}
	}
	return false
}
