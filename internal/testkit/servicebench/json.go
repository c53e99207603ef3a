package servicebench

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/arenaprof/arenaprof/arena"
)

// jsonRequest is the body of a JSON service's request: the order the
// line-based handler parses, as a client would post it.
type jsonRequest struct {
	User     string     `json:"user"`
	Coupon   string     `json:"coupon"`
	Currency string     `json:"currency"`
	Region   string     `json:"region"`
	Items    []jsonItem `json:"items"`
}

// jsonItem is one line of a jsonRequest.
type jsonItem struct {
	SKU   string   `json:"sku"`
	Qty   int64    `json:"qty"`
	Price int64    `json:"price"`
	Tags  []string `json:"tags,omitempty"`
}

// jsonLine is one line of a JSON response.
type jsonLine struct {
	SKU  string   `json:"sku"`
	Qty  int64    `json:"qty"`
	Net  int64    `json:"net"`
	Tags []string `json:"tags"`
}

// jsonResponse is what the JSON service answers.
type jsonResponse struct {
	User     string     `json:"user"`
	Currency string     `json:"currency"`
	Lines    []jsonLine `json:"lines"`
	Total    int64      `json:"total"`
}

// serveJSON is the handler of a JSON service in the common shape: the
// body decoded with encoding/json into heap values (encoding/json
// allocates them: an arena cannot take them), the handler's own values
// (the order's lines, their totals and copies of the strings it keeps)
// built on the request's arena (or the heap when h.pool is nil), and the
// response encoded with encoding/json into w.
func (h *handler) serveJSON(w io.Writer, body io.Reader) error {
	var a *arena.Arena
	if h.pool != nil {
		//lint:ignore SA1012 Pool.Get documents a nil ctx: no labels to look up, which this benchmark leaves out
		a = h.pool.Get(nil)
		defer h.pool.Put(a)
	}
	var req jsonRequest
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return err
	}
	if len(req.Items) == 0 {
		return errBadRequest
	}
	resp := alloc[jsonResponse](a)
	resp.User = clone(a, req.User)
	resp.Currency = clone(a, strings.ToUpper(req.Currency))
	resp.Lines = makeSlice[jsonLine](a, 0, len(req.Items))
	for _, it := range req.Items {
		t := alloc[total](a)
		t.gross = it.Qty * it.Price
		t.discount = t.gross / 20 * int64(len(it.Tags)%2)
		t.tax = (t.gross - t.discount) * 8 / 100
		t.net = t.gross - t.discount + t.tax
		tags := makeSlice[string](a, 0, len(it.Tags))
		for _, tag := range it.Tags {
			tags = append(tags, clone(a, tag))
		}
		resp.Lines = append(resp.Lines, jsonLine{SKU: clone(a, it.SKU), Qty: it.Qty, Net: t.net, Tags: tags})
		resp.Total += t.net
	}
	return json.NewEncoder(w).Encode(resp)
}
