package servicebench

import (
	"errors"
	"strconv"
	"strings"

	"github.com/arenaprof/arenaprof/arena"
)

// ResponseBuffer is the size of the buffer each request encodes its
// response into: larger than an arena chunk, like the index and I/O
// buffers of real handlers.
const ResponseBuffer = 72 << 10

// param is one query parameter of a request.
type param struct{ key, value string }

// item is one line of an order: it holds pointers (strings, a slice).
type item struct {
	sku   string
	qty   int64
	price int64
	tags  []string
}

// total is the pointer-free arithmetic of one line.
type total struct {
	gross, discount, tax, net int64
}

// order is what a request builds.
type order struct {
	path   string
	params []param
	items  []*item
	totals []*total
}

// handler serves requests from arenas of its pool, or from the heap when
// pool is nil. Every allocation goes through one of the helpers below, so
// the two versions run the same code.
type handler struct {
	pool *arena.Pool
}

func alloc[T any](a *arena.Arena) *T {
	if a == nil {
		return new(T)
	}
	return arena.New[T](a)
}

func makeSlice[T any](a *arena.Arena, n, c int) []T {
	if a == nil {
		return make([]T, n, c)
	}
	return arena.MakeSlice[T](a, n, c)
}

func clone(a *arena.Arena, s string) string {
	if a == nil {
		return strings.Clone(s)
	}
	return arena.String(a, s)
}

var errBadRequest = errors.New("servicebench: bad request")

// serve parses req (a request line, then one line per item:
// "sku qty price tag,tag"), builds the order, encodes the response into a
// fresh ResponseBuffer and returns its checksum and length.
func (h *handler) serve(req string) (sum uint64, n int, err error) {
	var a *arena.Arena
	if h.pool != nil {
		//lint:ignore SA1012 Pool.Get documents a nil ctx: no labels to look up, which this benchmark leaves out
		a = h.pool.Get(nil)
		defer h.pool.Put(a)
	}
	head, body, _ := strings.Cut(req, "\n")
	o, err := parseHead(a, head)
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Count(body, "\n") + 1
	o.items = makeSlice[*item](a, 0, lines)
	o.totals = makeSlice[*total](a, 0, lines)
	for line := range strings.SplitSeq(body, "\n") {
		it, err := parseItem(a, line)
		if err != nil {
			return 0, 0, err
		}
		t := alloc[total](a)
		t.gross = it.qty * it.price
		t.discount = t.gross / 20 * int64(len(it.tags)%2)
		t.tax = (t.gross - t.discount) * 8 / 100
		t.net = t.gross - t.discount + t.tax
		o.items = append(o.items, it)
		o.totals = append(o.totals, t)
	}
	buf := makeSlice[byte](a, 0, ResponseBuffer)
	buf = encode(buf, o)
	sum = 14695981039346656037
	for _, c := range buf {
		sum = (sum ^ uint64(c)) * 1099511628211
	}
	return sum, len(buf), nil
}

// parseHead parses "METHOD /path?k=v&k=v".
func parseHead(a *arena.Arena, head string) (*order, error) {
	_, target, ok := strings.Cut(head, " ")
	if !ok {
		return nil, errBadRequest
	}
	path, query, _ := strings.Cut(target, "?")
	o := alloc[order](a)
	o.path = clone(a, path)
	o.params = makeSlice[param](a, 0, strings.Count(query, "&")+1)
	for kv := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		o.params = append(o.params, param{clone(a, k), clone(a, v)})
	}
	return o, nil
}

// parseItem parses "sku qty price tag,tag".
func parseItem(a *arena.Arena, line string) (*item, error) {
	var f [4]string
	n := 0
	for rest := line; rest != "" && n < len(f); n++ {
		f[n], rest, _ = strings.Cut(rest, " ")
	}
	if n < 3 {
		return nil, errBadRequest
	}
	it := alloc[item](a)
	it.sku = clone(a, f[0])
	var err1, err2 error
	it.qty, err1 = strconv.ParseInt(f[1], 10, 64)
	it.price, err2 = strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, errBadRequest
	}
	if n > 3 {
		it.tags = makeSlice[string](a, 0, strings.Count(f[3], ",")+1)
		for t := range strings.SplitSeq(f[3], ",") {
			it.tags = append(it.tags, clone(a, t))
		}
	}
	return it, nil
}

// encode appends the response, JSON-like, to buf.
func encode(buf []byte, o *order) []byte {
	buf = append(buf, `{"path":"`...)
	buf = append(buf, o.path...)
	buf = append(buf, `","params":{`...)
	for i, p := range o.params {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendQuote(buf, p.key)
		buf = append(buf, ':')
		buf = strconv.AppendQuote(buf, p.value)
	}
	buf = append(buf, `},"lines":[`...)
	var sum int64
	for i, it := range o.items {
		if i > 0 {
			buf = append(buf, ',')
		}
		t := o.totals[i]
		buf = append(buf, `{"sku":`...)
		buf = strconv.AppendQuote(buf, it.sku)
		buf = append(buf, `,"qty":`...)
		buf = strconv.AppendInt(buf, it.qty, 10)
		buf = append(buf, `,"net":`...)
		buf = strconv.AppendInt(buf, t.net, 10)
		buf = append(buf, `,"tags":[`...)
		for j, tag := range it.tags {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendQuote(buf, tag)
		}
		buf = append(buf, "]}"...)
		sum += t.net
	}
	buf = append(buf, `],"total":`...)
	buf = strconv.AppendInt(buf, sum, 10)
	return append(buf, '}')
}
